// The hot paths one call at a time: what they cost and, above all, what they allocate. The project's rule is that
// the hot paths allocate nothing per frame and per packet in steady state, so each benchmark's checked-in threshold
// (Thresholds/<Swift version>/CaptureBenchmarks.<name>.p90.json) is its heap allocations per iteration (one frame or
// one packet), counted by malloc-interposer: 0. Wall clock is measured for reading, not checked (it depends on the
// machine). Not instructions: without perf events (this VM has none) asking for them added 16 allocations a sample.
//
// CAPTURE_BENCHMARK_SMOKE=1 (Scripts/benchmarks/micro --smoke, run by Scripts/test): a few iterations each, enough for
// the allocation counts, which do not vary between iterations.
import Benchmark
import CaptureCongestion
import CaptureConversion
import CaptureCore
import CaptureRTP
import CaptureVP8

#if canImport(Glibc)
    import Glibc
#endif

// Names have no spaces: the thresholds check looks their files up by the name as it is, where the update writes
// spaces as underscores.
let benchmarks: @Sendable () -> Void = {
    let smoke = getenv("CAPTURE_BENCHMARK_SMOKE") != nil
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .mallocCountTotal],
        warmupIterations: 5,
        scalingFactor: .one,
        maxDuration: smoke ? .milliseconds(200) : .seconds(2),
        maxIterations: smoke ? 20 : 10_000,
        // No tolerance: one allocation more (or fewer) than the checked-in count fails the check.
        thresholds: [.mallocCountTotal: BenchmarkThresholds(absolute: [.p90: 0])]
    )

    // The reference: package-benchmark's own allocations per sample, which every benchmark's count includes (0 with
    // these metrics). A hot path that allocates nothing reads the same as this one.
    Benchmark("Nothing", configuration: configuration) { benchmark in
        blackHole(benchmark)
    }

    for (format, output, size) in [
        ("YUYV", OutputPixelFormat.i420, Dimensions(width: 1280, height: 720)),
        ("YUYV", .nv12, Dimensions(width: 1280, height: 720)),
        ("NV12", .i420, Dimensions(width: 1280, height: 720)),
    ] {
        let pixelFormat = PixelFormat(fourCC: format)!
        let bytes =
            FrameConverter.minimumFrameBytes(
                pixelFormat: pixelFormat, width: size.width, height: size.height, bytesPerLine: 0) ?? 0
        let source = Pattern.bytes(count: bytes)
        let destination = VideoFrameBuffer(format: output, width: size.width, height: size.height)
        Benchmark("Convert.\(format)-\(output.rawValue.uppercased()).\(size)", configuration: configuration) {
            benchmark in
            source.withUnsafeBytes { raw in
                do {
                    try FrameConverter.convert(
                        raw, pixelFormat: pixelFormat, width: size.width, height: size.height, bytesPerLine: 0,
                        into: destination)
                } catch {
                    fatalError("conversion failed: \(error)")
                }
            }
            blackHole(destination)
        }
    }

    // One frame per iteration, a moving pattern (each frame differs from the last, as a camera's do), the encoder's
    // WebRTC real-time configuration; the bytes of each frame are let go before the next, as a sender does.
    for size in [Dimensions(width: 640, height: 480), Dimensions(width: 1280, height: 720)] {
        let encoder: VP8Encoder
        do {
            encoder = try VP8Encoder(
                configuration: VP8EncoderConfiguration(targetBitrateKbps: size.width > 640 ? 1500 : 800, framerate: 30))
        } catch {
            fatalError("no VP8 encoder: \(error)")
        }
        let buffers = (0..<8).map { index in
            let buffer = VideoFrameBuffer(format: .i420, width: size.width, height: size.height)
            Pattern.fill(buffer, seed: index)
            return buffer
        }
        let counter = Counter()
        Benchmark("VP8Encode.\(size)", configuration: configuration) { benchmark in
            let index = counter.next()
            let frame = VideoFrame(
                buffer: buffers[index % buffers.count], rotation: .degrees0,
                timestampNs: UInt64(index) * 33_333_333, sequenceNumber: UInt64(index))
            do {
                blackHole(try encoder.encode(frame)?.bytes.count)
            } catch {
                fatalError("VP8 encoding failed: \(error)")
            }
        }
    }

    // A 720p delta frame's worth of VP8 (6,000 bytes: 6 packets of at most 1,200 bytes), with the extensions a
    // WebRTC sender adds (mid and the transport-wide sequence number on every packet, video orientation on the last).
    var packetizerConfiguration = RTPPacketizerConfiguration(
        videoOrientationExtensionID: 2, midExtensionID: 1, mid: "0")
    packetizerConfiguration.transportSequenceNumberExtensionID = 3
    let packetizer = VP8Packetizer(configuration: packetizerConfiguration)
    let frame = Pattern.bytes(count: 6_000)
    let timestamp = Counter()
    Benchmark("RTPPacketize.VP8.6000B", configuration: configuration) { benchmark in
        var packets = 0
        frame.withUnsafeBytes { raw in
            packetizer.packetize(
                raw, rtpTimestamp: UInt32(truncatingIfNeeded: timestamp.next() * 3_000), isKeyFrame: false,
                isDroppable: false, rotation: .degrees0
            ) { packet in
                packets += packet.length
            }
        }
        blackHole(packets)
    }

    // One 1,200-byte RTP packet protected in place per iteration (the sender's transform on libcrypto), each with the
    // next sequence number, as a sender's packets come.
    for profile in [SRTPProfile.aesCM128HMACSHA1_80, .aeadAES128GCM] {
        let session: SRTPSession
        do {
            session = try SRTPSession(
                role: .sender, keyingMaterial: .random(profile: profile), profile: profile)
        } catch {
            fatalError("no SRTP session: \(error)")
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(
            byteCount: 1_200 + SRTPSession.maximumTrailerLength, alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0xA5)
        let sequence = Counter()
        Benchmark("SRTPProtect.\(profile.rawValue).1200B", configuration: configuration) { benchmark in
            let number = sequence.next()
            buffer[0] = 0x80
            buffer[1] = 96
            buffer[2] = UInt8(truncatingIfNeeded: number >> 8)
            buffer[3] = UInt8(truncatingIfNeeded: number)
            for index in 8..<12 { buffer[index] = 0x11 }
            var length = 1_200
            do {
                try session.protectRTP(buffer, length: &length)
            } catch {
                fatalError("SRTP protect failed: \(error)")
            }
            blackHole(length)
        }
    }

    // Transport-wide congestion control, per packet: the sender records each packet it sends in its history, the
    // receiver records each arrival for its feedback; one iteration, one packet (the 16-bit numbers wrap as they go).
    var sendHistory = TransportSendHistory()
    let sent = Counter()
    Benchmark("TWCC.SendHistoryRecord", configuration: configuration) { benchmark in
        let number = sent.next()
        blackHole(
            sendHistory.record(
                sequenceNumber: UInt16(truncatingIfNeeded: number), sendTimeNs: UInt64(number) * 2_000_000, size: 1_200,
                ssrc: 0x1234_5678))
    }
    var generator = TransportFeedbackGenerator(configuration: .init(senderSSRC: 1, mediaSSRC: 2))
    let arrived = Counter()
    Benchmark("TWCC.GeneratorRecord", configuration: configuration) { benchmark in
        let number = arrived.next()
        generator.record(sequenceNumber: UInt16(truncatingIfNeeded: number), arrivalTimeNs: UInt64(number) * 2_000_000)
        blackHole(generator.nextDeadlineNs)
    }

    // The estimator on one feedback of 50 packets (100 ms at 500 packets/s, one lost), each iteration the same
    // packets 100 ms later: its windows and sort buffer are reused, so a feedback costs no allocation.
    let start = ContinuousClock.now
    var estimator = SendSideBandwidthEstimator(at: start)
    var feedback = TransportPacketsFeedback(
        receivedAt: start,
        results: (0..<50).map { index in
            PacketResult(
                sendTime: start + .milliseconds(2 * index), size: 1_200,
                arrival: index == 17 ? nil : .milliseconds(2 * index + 40))
        })
    Benchmark("Congestion.OnFeedback.50Packets", configuration: configuration) { benchmark in
        for index in feedback.results.indices {
            feedback.results[index].sendTime += .milliseconds(100)
            feedback.results[index].arrival = feedback.results[index].arrival.map { $0 + .milliseconds(100) }
        }
        feedback.receivedAt += .milliseconds(100)
        estimator.onFeedback(feedback, now: feedback.receivedAt)
        blackHole(estimator.targetBitrate)
    }
}

/// A count the benchmark closures advance once per iteration (a frame index, a sequence number).
final class Counter {
    private var value = 0

    func next() -> Int {
        defer { value += 1 }
        return value
    }
}

/// Deterministic test content, so that runs compare.
enum Pattern {
    static func bytes(count: Int) -> [UInt8] {
        var state: UInt32 = 0x1234_5678
        return (0..<count).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24)
        }
    }

    /// A frame of a gradient shifted by `seed`, with a little noise, made through the converter (from YUYV).
    static func fill(_ buffer: VideoFrameBuffer, seed: Int) {
        let noise = bytes(count: 4_096)
        let yuyv = (0..<(buffer.width * buffer.height * 2)).map { index in
            let row = index / (buffer.width * 2)
            let column = index % (buffer.width * 2)
            return UInt8(truncatingIfNeeded: (row + column / 2 + 4 * seed) & 0xFF) ^ (noise[index % 4_096] & 7)
        }
        yuyv.withUnsafeBytes { raw in
            do {
                try FrameConverter.convert(
                    raw, pixelFormat: PixelFormat(fourCC: "YUYV")!, width: buffer.width, height: buffer.height,
                    bytesPerLine: 0, into: buffer)
            } catch {
                fatalError("conversion failed: \(error)")
            }
        }
    }
}
