import CaptureTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Each class of bad input: one line on standard error naming the problem, and its own exit status.
@Suite("capturer-probe bad input", .enabled(if: Probe.isAvailable, "the built capturer-probe executable"))
struct BadInputTests {
    /// Runs `arguments` and checks the exit status and the single error line.
    func expectFailure(_ arguments: [String], status: Int32, mentioning text: String, input: Data? = nil) async throws {
        let result = try await Probe.run(arguments, input: input)
        #expect(result.status == status, "\(arguments): \(result.stderr)")
        #expect(result.stderrLines.count == 1, "\(arguments): \(result.stderr)")
        let line = try #require(result.stderrLines.first)
        #expect(line.hasPrefix("capturer-probe: error: "))
        #expect(line.contains(text), "\(line)")
        #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("Stack dump"))
        #expect(result.stdout.isEmpty)
    }

    @Test("a device that does not exist: 3", arguments: ["formats", "select", "capture", "snapshot"])
    func deviceNotFound(command: String) async throws {
        var arguments = [command, "--device", "/dev/video99"]
        if command == "snapshot" { arguments += ["-o", "/tmp/capturer-probe-never.png"] }
        try await expectFailure(arguments, status: 3, mentioning: "/dev/video99")
        try await expectFailure(
            [command, "--device", "no-such-camera"] + arguments.dropFirst(3), status: 3,
            mentioning: "no-such-camera")
    }

    @Test(
        "not a capture device (a regular file, /dev/null, a directory): 4",
        arguments: ["/dev/null", "/etc/hostname", "/tmp"])
    func notACaptureDevice(path: String) async throws {
        try await expectFailure(["formats", "--device", path], status: 4, mentioning: path)
        try await expectFailure(["select", "--device", path], status: 4, mentioning: path)
    }

    @Test("a malformed dump or Y4M file: 7", arguments: ["garbage-line.txt", "bad-size.txt", "empty.txt"])
    func malformedDump(file: String) async throws {
        let path = Probe.fixture("devices/malformed/" + file)
        try await expectFailure(["select", "--formats", path], status: 7, mentioning: path)
        try await expectFailure(["formats", "--formats", path], status: 7, mentioning: path)
    }

    @Test("a malformed dump on standard input: 7")
    func malformedStandardInput() async throws {
        try await expectFailure(
            ["select", "--formats", "-"], status: 7, mentioning: "line", input: Data("hello\n".utf8))
    }

    @Test("a malformed Y4M file: 7")
    func malformedY4M() async throws {
        let directory = try Probe.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("broken.y4m").path
        try Data("YUV4MPEG2 W0 garbage\n".utf8).write(to: URL(fileURLWithPath: path))
        try await expectFailure(["formats", "--device", path], status: 7, mentioning: path)
    }

    @Test("a bad --target: 64 (usage)", arguments: ["0x0", "abcxdef", "640", "-5x10", "1280x"])
    func badTarget(target: String) async throws {
        try await expectFailure(["select", "--target", target], status: 64, mentioning: "--target")
        try await expectFailure(["capture", "-d", "synthetic", "--target", target], status: 64, mentioning: "--target")
    }

    @Test("other usage errors: 64")
    func usage() async throws {
        try await expectFailure(["capture", "--frames", "0"], status: 64, mentioning: "--frames")
        try await expectFailure(["capture", "--frames", "2", "--seconds", "1"], status: 64, mentioning: "--seconds")
        try await expectFailure(["capture", "--orientation", "sideways"], status: 64, mentioning: "sideways")
        try await expectFailure(["snapshot", "-d", "synthetic", "-o", "/tmp/x.gif"], status: 64, mentioning: ".png")
        try await expectFailure(["snapshot", "-d", "synthetic"], status: 64, mentioning: "--output")
        try await expectFailure(["select", "--prefer", "TOOLONG"], status: 64, mentioning: "--prefer")
        try await expectFailure(
            ["select", "--device", "synthetic", "--formats", "x.txt"], status: 64, mentioning: "--formats")
        try await expectFailure(["frobnicate"], status: 64, mentioning: "frobnicate")
    }

    @Test("an unwritable output path is refused before capturing: 8")
    func outputNotWritable() async throws {
        let missing = "/nonexistent-capturer-probe-dir/out.ivf"
        try await expectFailure(["capture", "-d", "synthetic", "--output", missing], status: 8, mentioning: missing)
        try await expectFailure(["capture", "-d", "synthetic", "--output", "/tmp"], status: 8, mentioning: "/tmp")
        try await expectFailure(
            ["snapshot", "-d", "synthetic", "-o", "/nonexistent-capturer-probe-dir/x.png"],
            status: 8, mentioning: "x.png")
    }

    @Test("no usable format on a device: 10")
    func noUsableFormat() async throws {
        let dump = """
            ioctl: VIDIOC_ENUM_FMT
            \tType: Video Capture

            \t[0]: 'H264' (H.264, compressed)
            \t\tSize: Discrete 1920x1080
            \t\t\tInterval: Discrete 0.033s (30.000 fps)

            """
        try await expectFailure(
            ["select", "--formats", "-"], status: 10, mentioning: "no format", input: Data(dump.utf8))
    }

    static let isRoot = getuid() == 0

    @Test(
        "a file the user may not read: 6",
        .enabled(if: !isRoot, "root reads every file, so permission cannot be denied when tests run as root"))
    func permissionDenied() async throws {
        let directory = try Probe.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try SnapshotCommandTests.redY4M(in: directory)
        chmod(path, 0)
        try await expectFailure(["formats", "--device", path], status: 6, mentioning: path)
    }
}
