import CaptureTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The V4L2 node the vivid suite uses.
enum VividNode {
    /// The first capture node: `VIVID_DEVICE`, else the lowest-numbered `/dev/video*`.
    static let node: String? = {
        if let device = ProcessInfo.processInfo.environment["VIVID_DEVICE"] { return device }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []
        return names.filter { $0.hasPrefix("video") }.sorted().first.map { "/dev/" + $0 }
    }()

    static let isAvailable: Bool = {
        let available =
            node.map { FileManager.default.fileExists(atPath: $0) } == true && Probe.executable != nil
            && ExternalProcess.which("v4l2-ctl") != nil
        if !available {
            print("SKIPPED: capturer-probe on a real node needs a /dev/video* camera and v4l2-ctl (the vivid guest)")
        }
        return available
    }()
}

/// capturer-probe on a real V4L2 camera: in the vivid guest (Scripts/test-vivid runs suites matching "Vivid"), or on
/// any machine with a /dev/video* node and v4l2-ctl.
@Suite(
    "capturer-probe on a real V4L2 node (vivid)", .tags(.lab), .selectedByTags,
    .enabled(if: VividNode.isAvailable, "a V4L2 camera"))
struct VividProbeTests {
    @Test("formats is byte-identical to v4l2-ctl --list-formats-ext and exits 0")
    func formatsMatchV4L2Ctl() async throws {
        let node = try #require(VividNode.node)
        let v4l2ctl = try #require(ExternalProcess.which("v4l2-ctl"))
        let reference = try await ExternalProcess.run(v4l2ctl, ["-d", node, "--list-formats-ext"])
        let ours = try await Probe.run(["formats", "--device", node])
        #expect(ours.status == 0, "\(ours.stderr)")
        #expect(ours.stdout == String(decoding: reference.stdout, as: UTF8.self))
    }

    @Test("controls is byte-identical to v4l2-ctl --list-ctrls-menus and exits 0; --get matches --get-ctrl")
    func controlsMatchV4L2Ctl() async throws {
        let node = try #require(VividNode.node)
        let v4l2ctl = try #require(ExternalProcess.which("v4l2-ctl"))
        // vivid's gain is volatile (it follows the clock's seconds): under emulation the two listings are seconds
        // apart, so a volatile control's value is compared as "some number", everything else byte for byte.
        func maskingVolatileValues(_ listing: String) -> String {
            listing.split(separator: "\n", omittingEmptySubsequences: false).map { line in
                guard line.contains("volatile"), let range = line.firstRange(of: /value=-?[0-9]+/) else {
                    return String(line)
                }
                return line.replacingCharacters(in: range, with: "value=<volatile>")
            }.joined(separator: "\n")
        }
        let result = try await Probe.run(["controls", "--device", node])
        #expect(result.status == 0, "\(result.stderr)")
        let ours = result.stdout
        let theirs = String(decoding: try await ExternalProcess.run(v4l2ctl, ["-d", node, "-L"]).stdout, as: UTF8.self)
        #expect(maskingVolatileValues(ours) == maskingVolatileValues(theirs))
        #expect(ours.contains("volatile"), "vivid's listing has no volatile control to mask: the mask hides nothing")
        let keys = "brightness,menu,integer_menu,bitmask,string,integer_64_bits"
        let get = try await Probe.run(["controls", "--device", node, "--get", keys])
        let reference = try await ExternalProcess.run(v4l2ctl, ["-d", node, "--get-ctrl", keys])
        #expect(get.stdout == String(decoding: reference.stdout, as: UTF8.self))
        let refused = try await Probe.run(["controls", "--device", node, "--set", "brightness=999"])
        #expect(refused.status == 16)
    }

    @Test("list shows the node as the default device; select and capture work on it")
    func listSelectCapture() async throws {
        let node = try #require(VividNode.node)
        let list = try await Probe.run(["list", "--json"]).json()
        let devices = try #require(list["devices"] as? [[String: Any]])
        let real = try #require(devices.first { $0["node"] as? String == node })
        #expect(real["kind"] as? String == "v4l2")
        #expect(list["defaultDevice"] as? String == real["id"] as? String)
        let selection = try await Probe.run(["select", "--device", node, "--target", "640x480", "--json"]).json()
        #expect(selection["width"] as? Int == 640)
        let capture = try await Probe.run(
            [
                "capture", "--device", node, "--target", "640x480", "--frames", "10", "--orientation", "portrait",
                "--json",
            ]).json()
        #expect(capture["framesEncoded"] as? Int ?? 0 >= 1)
        #expect(capture["rotation"] as? Int == 90)
        #expect(try #require(capture["psnr"] as? Double) > 30)
    }

    @Test("a busy device: exit status 5 and one line")
    func busy() async throws {
        let node = try #require(VividNode.node)
        let executable: URL = try #require(Probe.executable)
        let holder = Process()
        holder.executableURL = executable
        holder.arguments = ["capture", "--device", node, "--seconds", "6", "--target", "640x480"]
        holder.standardOutput = FileHandle.nullDevice
        holder.standardError = FileHandle.nullDevice
        try holder.run()
        let result: Probe.Result
        do {
            try await Task.sleep(nanoseconds: 2_000_000_000)
            result = try await Probe.run(["capture", "--device", node, "--frames", "1", "--target", "640x480"])
        } catch {
            await Self.end(holder)
            throw error
        }
        await Self.end(holder)
        #expect(result.status == 5, "\(result.stderr)")
        #expect(result.stderrLines.count == 1)
        #expect(result.stderrLines.first?.hasPrefix("capturer-probe: error: \(node)") == true)
    }

    /// Terminates `process` and returns once it has exited (looking every 20 ms, suspended, not blocking a thread).
    private static func end(_ process: Process) async {
        process.terminate()
        while process.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
    }
}
