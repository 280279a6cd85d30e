#if CAPTURE_LIBFUZZER
    internal import CLibFuzzer
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The target chosen by the `CAPTURE_FUZZ_TARGET` environment variable (read once, before the first input).
let selectedTarget: FuzzTarget? = getenv("CAPTURE_FUZZ_TARGET").flatMap { FuzzTarget.named(String(cString: $0)) }

/// libFuzzer's callback: runs the selected target on one input.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let target = selectedTarget else {
        let names = FuzzTarget.all.map(\.name).joined(separator: ", ")
        printError("capture-fuzz: set CAPTURE_FUZZ_TARGET to one of: \(names)")
        exit(2)
    }
    target.run(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
    return 0
}

/// The entry point.
///
/// Built by `Scripts/fuzz` (`-sanitize=fuzzer,address -DCAPTURE_LIBFUZZER`), it hands the command line to libFuzzer:
/// `CAPTURE_FUZZ_TARGET=<target> capture-fuzz [libFuzzer flags] [corpus…]`. In a plain build it replays files
/// through a target, to reproduce a finding without the fuzzer runtime: `capture-fuzz <target> <file>…`.
@main
enum CaptureFuzz {
    static func main() {
        #if CAPTURE_LIBFUZZER
            var argc = CommandLine.argc
            var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
            exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzTestOneInput))
        #else
            replay(CommandLine.arguments.dropFirst())
        #endif
    }

    /// Runs every file in `arguments` (after the target's name) through the target.
    static func replay(_ arguments: ArraySlice<String>) {
        guard let name = arguments.first, let target = FuzzTarget.named(name) else {
            let names = FuzzTarget.all.map(\.name).joined(separator: "|")
            printError("usage: capture-fuzz <\(names)> <file>…")
            exit(2)
        }
        for path in arguments.dropFirst() {
            guard let bytes = FuzzInputFile.contents(of: path) else {
                printError("capture-fuzz: cannot read \(path)")
                exit(1)
            }
            bytes.withUnsafeBytes { target.run($0) }
            print("\(name): \(path): ok")
        }
    }
}

/// Writes `message` and a newline to standard error.
func printError(_ message: String) {
    var line = message + "\n"
    line.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
}
