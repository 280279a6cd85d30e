import Foundation

/// ffmpeg and GStreamer as independent RTP peers: receivers that decode what we send, senders whose VP8 streams we
/// receive. Every peer runs under coreutils' `timeout`, so that a peer that never sees its stream end is stopped (with
/// SIGINT, so that it flushes what it decoded) and never outlives its test.
package enum RTPPeers {
    /// A failed peer run, with its exit status and standard error.
    package struct Failure: Error, CustomStringConvertible {
        /// What went wrong, including the peer's own message.
        package let description: String
    }

    /// The VP8 RTP caps GStreamer needs on `udpsrc` (payload type 96, 90 kHz).
    package static let vp8Caps = "application/x-rtp,media=video,encoding-name=VP8,clock-rate=90000,payload=96"

    /// Whether `ffmpeg` exists; prints a loud note naming `test` when it does not.
    package static func ffmpegAvailable(for test: String) -> Bool {
        available("ffmpeg", for: test, package: "ffmpeg")
    }

    /// Whether `gst-launch-1.0` exists; prints a loud note naming `test` when it does not.
    package static func gstreamerAvailable(for test: String) -> Bool {
        available("gst-launch-1.0", for: test, package: "gstreamer1.0-tools gstreamer1.0-plugins-good")
    }

    private static func available(_ tool: String, for test: String, package: String) -> Bool {
        guard ExternalProcess.which(tool) != nil, ExternalProcess.which("timeout") != nil else {
            print("SKIPPED (\(test)): \(tool) is not installed (apt-get install \(package); Scripts/install-deps)")
            return false
        }
        return true
    }

    /// Writes a `frames`-frame test pattern (ffmpeg's `testsrc2`) as a Y4M file, the source both ends compare with.
    package static func makeY4M(at path: String, width: Int, height: Int, fps: Int, frames: Int) async throws {
        let result = try await ExternalProcess.run(
            "ffmpeg",
            [
                "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi",
                "-i", "testsrc2=size=\(width)x\(height):rate=\(fps)", "-frames:v", "\(frames)",
                "-pix_fmt", "yuv420p", path,
            ])
        try check(result, "ffmpeg testsrc2")
    }

    /// Waits until some process has a UDP socket bound to `port` (read from `/proc/net/udp` and `/proc/net/udp6`), so
    /// that a sender started next loses nothing to a receiver that is still starting: once bound, the kernel queues
    /// the datagrams. Returns whether the port was seen before `timeout`.
    @discardableResult
    package static func waitForUDPListener(port: Int, timeout: Duration = .seconds(20)) async throws -> Bool {
        let suffix = ":" + String(format: "%04X", port)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            for table in ["/proc/net/udp", "/proc/net/udp6"] {
                let text = (try? String(contentsOfFile: table, encoding: .utf8)) ?? ""
                for line in text.split(separator: "\n").dropFirst() {
                    let columns = line.split(separator: " ", omittingEmptySubsequences: true)
                    if columns.count > 1, columns[1].hasSuffix(suffix) { return true }
                }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// ffmpeg opening `sdp` (as `ffmpeg -protocol_whitelist file,udp,rtp,srtp -i x.sdp`) and decoding to raw I420
    /// in `output`. It stops after `frames` frames, when the stream has been silent for ffmpeg's own timeout, or
    /// after `limitSeconds`.
    package static func ffmpegReceive(
        sdp: String, output: String, frames: Int, limitSeconds: Int
    ) async throws -> ExternalProcess.Result {
        try await ExternalProcess.run(
            "timeout",
            [
                "-s", "INT", "-k", "3", "\(limitSeconds)", "ffmpeg", "-nostdin", "-loglevel", "error", "-y",
                "-protocol_whitelist", "file,udp,rtp,srtp", "-i", sdp, "-frames:v", "\(frames)",
                // Exactly the frames decoded: rawvideo output is constant-frame-rate by default, which duplicates
                // the previous frame into every RTP timestamp gap (a frame the sender's encoder queue dropped).
                "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "yuv420p", output,
            ])
    }

    /// `gst-launch-1.0 udpsrc port=P caps=VP8 ! rtpjitterbuffer ! rtpvp8depay ! vp8dec` writing raw I420 to
    /// `output`, stopped (with end-of-stream, so the file is complete) after `limitSeconds`.
    package static func gstreamerReceive(
        port: Int, output: String, limitSeconds: Int
    ) async throws
        -> ExternalProcess.Result
    {
        try await ExternalProcess.run(
            "timeout",
            [
                "-s", "INT", "-k", "3", "\(limitSeconds)", "gst-launch-1.0", "-q", "-e",
                "udpsrc", "address=127.0.0.1", "port=\(port)", "caps=\(vp8Caps)", "!", "rtpjitterbuffer", "!",
                "rtpvp8depay", "!", "vp8dec", "!", "video/x-raw,format=I420", "!", "filesink", "location=\(output)",
            ])
    }

    /// ffmpeg sending `source` (a Y4M file) as VP8 over RTP to `127.0.0.1:port` at its frame rate
    /// (`-re … -c:v libvpx -f rtp`), with a key frame every `keyFrameInterval` frames.
    package static func ffmpegSend(
        source: String, port: Int, keyFrameInterval: Int = 30, limitSeconds: Int
    )
        async throws
    {
        let result = try await ExternalProcess.run(
            "timeout",
            [
                "-k", "3", "\(limitSeconds)", "ffmpeg", "-nostdin", "-loglevel", "error", "-re", "-i", source,
                "-c:v", "libvpx", "-deadline", "realtime", "-b:v", "800k", "-g", "\(keyFrameInterval)",
                "-f", "rtp", "-payload_type", "96", "rtp://127.0.0.1:\(port)?pkt_size=1200",
            ])
        try check(result, "ffmpeg -f rtp")
    }

    /// GStreamer sending `frames` test-pattern frames as VP8 over RTP (`vp8enc ! rtpvp8pay ! udpsink`) to
    /// `127.0.0.1:port`, in real time.
    package static func gstreamerSend(
        port: Int, width: Int, height: Int, frames: Int, limitSeconds: Int
    )
        async throws
    {
        let result = try await ExternalProcess.run(
            "timeout",
            [
                "-k", "3", "\(limitSeconds)", "gst-launch-1.0", "-q", "videotestsrc", "num-buffers=\(frames)", "!",
                "video/x-raw,width=\(width),height=\(height),framerate=30/1", "!",
                "vp8enc", "deadline=1", "keyframe-max-dist=30", "!", "rtpvp8pay", "pt=96", "mtu=1200", "!",
                "udpsink", "host=127.0.0.1", "port=\(port)", "sync=true",
            ])
        try check(result, "gst-launch-1.0 rtpvp8pay")
    }

    /// The number of whole I420 frames of `width`×`height` in a raw file (0 when it does not exist).
    package static func rawFrameCount(_ path: String, width: Int, height: Int) -> Int {
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        return size / (width * height * 3 / 2)
    }

    /// The average PSNR (dB, all planes) of the raw I420 `decoded` against the first frames of `reference`, as
    /// ffmpeg's `psnr` filter computes it. Frame i is compared with frame i: both streams are retimed to their frame
    /// index first, since the filter pairs frames by timestamp and the raw file's 25 fps default would otherwise
    /// pair frame 6 with reference frame 5 when the reference runs at 30 fps.
    package static func psnr(decoded: String, width: Int, height: Int, reference: String) async throws -> Double {
        let result = try await ExternalProcess.run(
            "ffmpeg",
            [
                "-nostdin", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", "\(width)x\(height)", "-i", decoded,
                "-i", reference, "-lavfi", "[0:v]setpts=N/TB[a];[1:v]setpts=N/TB[b];[a][b]psnr", "-f", "null", "-",
            ])
        try check(result, "ffmpeg psnr")
        guard let range = result.stderrText.range(of: "average:") else {
            throw Failure(description: "ffmpeg printed no PSNR: \(result.stderrText.suffix(400))")
        }
        let value = result.stderrText[range.upperBound...].prefix { !$0.isWhitespace }
        if value == "inf" { return .infinity }
        guard let psnr = Double(value) else { throw Failure(description: "unreadable PSNR '\(value)'") }
        return psnr
    }

    /// The mean PSNR (dB, all three planes' bytes, as ffmpeg's `psnr` average weighs them) of the raw I420 `decoded`
    /// against the 4:2:0 Y4M `reference`, each decoded frame paired with the best-matching of the next
    /// `maximumSkip + 1` reference frames after the previous match (the reference looping, as the Y4M camera does). A sender that rightly drops frames under load (its newest-frame
    /// mailbox) sends a subsequence of the reference; this pairs it frame for frame all the same, where
    /// ``psnr(decoded:width:height:reference:)`` needs every frame. `nil` when either file holds no whole frame.
    package static func alignedPSNR(
        decoded: String, width: Int, height: Int, reference: String, maximumSkip: Int
    ) throws -> Double? {
        let frameSize = width * height * 3 / 2
        let decodedBytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: decoded)))
        let referenceBytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: reference)))
        // Y4M: a header line, then per frame a "FRAME…" line and the planes.
        var frameOffsets: [Int] = []
        var index = referenceBytes.firstIndex(of: 0x0A).map { $0 + 1 } ?? referenceBytes.count
        while index < referenceBytes.count, let lineEnd = referenceBytes[index...].firstIndex(of: 0x0A),
            lineEnd + 1 + frameSize <= referenceBytes.count
        {
            frameOffsets.append(lineEnd + 1)
            index = lineEnd + 1 + frameSize
        }
        let decodedFrames = decodedBytes.count / frameSize
        guard !frameOffsets.isEmpty, decodedFrames > 0 else { return nil }
        func framePSNR(_ decodedOffset: Int, _ referenceOffset: Int) -> Double {
            var squares = 0
            for byte in 0..<frameSize {
                let difference = Int(decodedBytes[decodedOffset + byte]) - Int(referenceBytes[referenceOffset + byte])
                squares += difference * difference
            }
            guard squares > 0 else { return 100 }
            return 10 * log10(255.0 * 255.0 * Double(frameSize) / Double(squares))
        }
        var total = 0.0
        var previous = -1
        for frame in 0..<decodedFrames {
            var best = (psnr: -Double.infinity, index: previous + 1)
            for candidate in previous + 1...previous + 1 + maximumSkip {
                let psnr = framePSNR(frame * frameSize, frameOffsets[candidate % frameOffsets.count])
                if psnr > best.psnr { best = (psnr, candidate) }
            }
            total += best.psnr
            previous = best.index
        }
        return total / Double(decodedFrames)
    }

    private static func check(_ result: ExternalProcess.Result, _ what: String) throws {
        guard result.status == 0 else {
            throw Failure(description: "\(what) exited \(result.status): \(result.stderrText.suffix(600))")
        }
    }
}
