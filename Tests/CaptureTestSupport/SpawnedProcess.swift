#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Child processes started with `posix_spawn`, for the tests that cannot use Foundation's `Process` (as
/// ``ExternalProcess`` does): in the vivid guest `Process` hangs (it needs a CFSocket wakeup socket pair that cannot be
/// created there), and under LeakSanitizer its `run()`/`waitUntilExit()` leak a weak reference's side table.
///
/// The caller owns the pid it gets: it waits for it with ``waitForExit(_:)``, after killing it if need be.
package enum SpawnedProcess {
    /// Where one of the child's standard descriptors comes from or goes to.
    package enum Stream: Sendable, Hashable {
        /// The test process's own descriptor.
        case inherit
        /// `/dev/null`.
        case null
        /// The file at this path, opened to read (input) or to append (output).
        case file(String)
        /// This descriptor, as the child has it at that point: the streams are set in the order input, output,
        /// error, so `error: .descriptor(1)` follows the output wherever it was sent. A descriptor of the test
        /// process (a pipe's write end) should be close-on-exec, so that the child keeps only the copy made here.
        case descriptor(Int32)
    }

    /// `posix_spawn` refused to start the program.
    package struct LaunchError: Error, CustomStringConvertible {
        /// The program that did not start.
        package var program: String
        /// The error number `posix_spawn` returned.
        package var code: Int32

        package var description: String { "could not run \(program): \(String(cString: strerror(code)))" }
    }

    /// Starts `argv` (its first word is looked up on `PATH` unless `executable` gives the path) with its standard
    /// descriptors set as given, and returns its pid.
    package static func start(
        _ argv: [String], executable: String? = nil, input: Stream = .inherit, output: Stream = .inherit,
        error: Stream = .inherit
    ) throws(LaunchError) -> pid_t {
        let program = executable ?? argv.first ?? ""
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, stream) in [(Int32(0), input), (1, output), (2, error)] {
            switch stream {
            case .inherit: break
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .file(let path):
                posix_spawn_file_actions_addopen(
                    &actions, target, path, target == 0 ? O_RDONLY : O_WRONLY | O_APPEND, 0)
            case .descriptor(let descriptor): posix_spawn_file_actions_adddup2(&actions, descriptor, target)
            }
        }
        // Nothing else of the test process reaches the child: no other test's socket or pipe (NIO and Foundation open
        // theirs without close-on-exec), which the child would otherwise hold open for as long as it runs (a server
        // spawned by one test kept another test's listening port bound, and another's pipe unfinished).
        if let closeFrom = Self.closeFrom { _ = closeFrom(&actions, 3) }
        let arguments = argv.map { strdup($0) } + [nil]
        defer { arguments.forEach { free($0) } }
        var pid: pid_t = 0
        let status =
            if let executable {
                posix_spawn(&pid, executable, &actions, nil, arguments, environ)
            } else {
                posix_spawnp(&pid, program, &actions, nil, arguments, environ)
            }
        guard status == 0 else { throw LaunchError(program: program, code: status) }
        return pid
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later; declared only under `_GNU_SOURCE`, so
    /// looked up at run time), or `nil` where it is missing.
    private static let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? =
        {
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
            else { return nil }
            return unsafeBitCast(
                symbol,
                to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
        }()

    /// Kills `pid` with SIGKILL and waits for it (a child spawned from a test thread inherits that thread's signal
    /// mask, which may block SIGTERM; coturn does not exit on SIGTERM at all). Returns what ``waitForExit(_:)`` does.
    @discardableResult
    package static func killAndWait(_ pid: pid_t) -> Int32 {
        _ = kill(pid, SIGKILL)
        return waitForExit(pid)
    }

    /// Waits for `pid` to end (retrying on EINTR) and returns its exit status: the code it exited with, or 128 plus
    /// the signal that ended it, as a shell reports it; -1 when there is no such child.
    @discardableResult
    package static func waitForExit(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return -1 }
        }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
}
