import ArgumentParser
import Foundation
import CaptureCore
import CaptureVP8

extension CapturerProbe {
    /// `capturer-probe capture`: capture, encode to VP8, decode back, and report.
    struct Capture: AsyncParsableCommand, ProbeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Capture through CameraVideoCapturer, encode to VP8 (optionally to an IVF file), decode it "
                + "back, and report frame rate, jitter, latency, bit rate, rotation and PSNR.")

        @OptionGroup var global: GlobalOptions
        @OptionGroup var source: DeviceOptions
        @OptionGroup var request: RequestOptions

        @Option(help: "Frames to capture (default 60 unless --seconds is given).")
        var frames: Int?

        @Option(help: "Capture for this many seconds instead of a frame count.")
        var seconds: Double?

        @Option(
            name: [.short, .long], help: ArgumentHelp("Write the VP8 stream to this IVF file.", valueName: "file.ivf"))
        var output: String?

        @Option(help: ArgumentHelp("VP8 target bit rate in kbit/s.", valueName: "kbps"))
        var bitrate = 1_000

        @Option(help: "The device orientation, which sets the rotation carried on the frames.")
        var orientation: DeviceOrientation = .unknown

        @Flag(
            help:
                "Deliver synthetic, recorded and file frames as fast as they are consumed instead of at the frame rate."
        )
        var unpaced = false

        func validate() throws {
            if frames != nil, seconds != nil { throw ValidationError("give either --frames or --seconds, not both") }
            if let frames, frames < 1 { throw ValidationError("--frames must be at least 1") }
            if let seconds, !(seconds > 0 && seconds.isFinite) { throw ValidationError("--seconds must be positive") }
            guard (1...100_000).contains(bitrate) else { throw ValidationError("--bitrate must be 1...100000 kbit/s") }
        }

        struct Output: Codable {
            var schemaVersion = jsonSchemaVersion
            var device: DeviceSummary
            var pixelFormat: String
            var width: Int
            var height: Int
            var requestedFps: Double
            var grantedFps: Double
            var paced: Bool
            var orientation: String
            var rotation: Int
            var framesCaptured: Int
            var framesDelivered: Int
            var framesDropped: Int
            var framesEncoded: Int
            var framesDroppedByEncoder: Int
            var keyFrames: Int
            var fps: Double
            var jitterMs: Double
            /// Intervals between the frames' capture timestamps.
            var timing: TimingSummary
            /// Intervals between the frames' arrivals at the delegate (what a consumer experiences).
            var arrival: TimingSummary
            /// Capture timestamp → encoded frame out of libvpx.
            var latencyMs: LatencySummary
            /// Capture timestamp → arrival at the delegate.
            var deliveryLatencyMs: LatencySummary
            var bytes: Int
            var bitrateKbps: Double
            var targetBitrateKbps: Int
            var framesDecoded: Int
            var psnr: Double
            var psnrY: Double
            var psnrFrames: Int
            /// How often capture waited for the loopback scoring thread (all its slots taken).
            var scorerWaits: Int
            var output: String?
            /// The process's peak resident set size (VmHWM), in KiB, when /proc tells it.
            var peakRSSKiB: Int?
        }

        mutating func run() async throws {
            let resolved = try source.resolve()
            if let output { try OutputFile.checkWritable(output) }
            let limit = seconds == nil ? (frames ?? 60) : Int.max
            let deadlineNs = seconds.map { MonotonicClock.nowNs() + UInt64($0 * 1e9) }

            let selection = try request.select(on: resolved)
            let encoder = try VP8Encoder(
                configuration: VP8EncoderConfiguration(
                    targetBitrateKbps: bitrate, framerate: max(1, selection.fps)))
            let writer = try output.map { path throws(CaptureError) in
                try IVFWriter(path: path, dimensions: selection.dimensions)
            }
            let consumer = try EncodingConsumer(
                encoder: encoder, decoder: try VP8Decoder(), writer: writer, limit: limit, deadlineNs: deadlineNs,
                progress: StandardError.isTerminal && !global.json)
            let run: CaptureRun
            do {
                run = try await CaptureRun.start(
                    on: resolved, request: request, paced: !unpaced, orientation: orientation, delegate: consumer)
            } catch {
                _ = try? await consumer.finish()
                if let output { unlink(output) }
                throw error
            }
            let granted = run.configuration.granted
            let waiter = Task {
                for await _ in consumer.completion { return }
            }
            // Time limits are also checked here, in case frames stop coming.
            let timer = Task { [seconds] in
                guard let seconds else { return }
                try await Task.sleep(for: .seconds(seconds + 5))
                waiter.cancel()
            }
            await waiter.value
            timer.cancel()
            let record = try await run.stop { try await consumer.finish() }

            let statistics = run.capturer.statistics
            let timing = TimingSummary(record.timing)
            let totalBytes = record.bytes
            let streamSeconds = Double(record.framesEncoded) / max(1, granted.fps)
            let result = Output(
                device: DeviceSummary(resolved.device), pixelFormat: granted.pixelFormat.fourCC,
                width: granted.dimensions.width, height: granted.dimensions.height,
                requestedFps: run.selection.fps, grantedFps: granted.fps, paced: !unpaced,
                orientation: orientation.rawValue,
                rotation: record.rotations.sorted().last ?? run.capturer.rotation.degrees,
                framesCaptured: statistics.framesCaptured, framesDelivered: statistics.framesDelivered,
                framesDropped: statistics.framesDropped,
                framesEncoded: record.framesEncoded, framesDroppedByEncoder: record.droppedByEncoder,
                keyFrames: record.keyFrames, fps: timing.fps,
                jitterMs: timing.jitterMs, timing: timing, arrival: TimingSummary(record.arrivals),
                latencyMs: LatencySummary(record.encodeLatency),
                deliveryLatencyMs: LatencySummary(record.deliveryLatency), bytes: totalBytes,
                bitrateKbps: streamSeconds > 0 ? (Double(totalBytes) * 8 / 1000 / streamSeconds).rounded(places: 1) : 0,
                targetBitrateKbps: bitrate, framesDecoded: record.framesDecoded,
                psnr: record.pictureError.psnr.rounded(places: 2),
                psnrY: record.pictureError.lumaPSNR.rounded(places: 2), psnrFrames: record.framesCompared,
                scorerWaits: record.scorerWaits, output: output, peakRSSKiB: ProcessMemory.peakResidentKiB())
            if global.json { try printJSON(result) } else { print(Self.text(result)) }
        }

        static func text(_ l: LatencySummary) -> String {
            func ms(_ value: Double) -> String { String(value.rounded(places: 2)) }
            return "p50 \(ms(l.p50)) ms, p90 \(ms(l.p90)), p99 \(ms(l.p99)), p99.9 \(ms(l.p999)), max \(ms(l.max))"
                + (l.aheadOfClock > 0 ? " (\(l.aheadOfClock) stamped ahead of the clock, counted as 0)" : "")
        }

        static func text(_ r: Output) -> String {
            func ms(_ value: Double) -> String { String(value.rounded(places: 2)) }
            return """
                device:      \(r.device.id) (\(r.device.name))
                format:      \(r.pixelFormat) \(r.width)x\(r.height) at \(Text.fps(r.grantedFps)) fps\
                \(r.paced ? "" : " (unpaced)")
                frames:      \(r.framesCaptured) captured, \(r.framesDelivered) delivered, \(r.framesDropped) dropped
                timing:      \(Text.fps(r.fps)) fps measured, interval \(ms(r.timing.meanIntervalMs)) ms \
                (min \(ms(r.timing.minIntervalMs)), max \(ms(r.timing.maxIntervalMs))), jitter \(ms(r.jitterMs)) ms
                arrival:     interval \(ms(r.arrival.meanIntervalMs)) ms (min \(ms(r.arrival.minIntervalMs)), \
                max \(ms(r.arrival.maxIntervalMs))), jitter \(ms(r.arrival.jitterMs)) ms at the delegate
                rotation:    \(r.rotation)° (orientation \(r.orientation), position \(r.device.position))
                VP8:         \(r.framesEncoded) frames encoded (\(r.keyFrames) key), \(r.framesDroppedByEncoder) \
                dropped by rate control, \(r.bytes) bytes, \(r.bitrateKbps) kbit/s (target \(r.targetBitrateKbps))
                latency:     capture to delegate \(Self.text(r.deliveryLatencyMs))
                             capture to encoded  \(Self.text(r.latencyMs))
                loopback:    \(r.framesDecoded) frames decoded, PSNR \(r.psnr) dB (Y \(r.psnrY) dB) over \
                \(r.psnrFrames) frames (scored on a second thread; capture waited for it \(r.scorerWaits) times)
                """ + (r.peakRSSKiB.map { "\nmemory:      peak RSS \($0 / 1024) MiB" } ?? "")
                    + (r.output.map { "\noutput:      \($0)" } ?? "")
        }
    }
}
