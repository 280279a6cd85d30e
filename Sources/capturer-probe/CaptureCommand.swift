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
            var latencyMs: LatencySummary
            var bytes: Int
            var bitrateKbps: Double
            var targetBitrateKbps: Int
            var framesDecoded: Int
            var psnr: Double
            var psnrY: Double
            var psnrFrames: Int
            var output: String?
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
            let consumer = EncodingConsumer(
                encoder: encoder, writer: writer, limit: limit, deadlineNs: deadlineNs,
                progress: StandardError.isTerminal && !global.json)
            let run: CaptureRun
            do {
                run = try await CaptureRun.start(
                    on: resolved, request: request, paced: !unpaced, orientation: orientation, delegate: consumer)
            } catch {
                _ = try? consumer.finish()
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
            let stopError: (any Error)?
            do { try await run.stop(); stopError = nil } catch { stopError = error }
            let record = try consumer.finish()
            if let stopError { throw stopError }

            // Decode the stream back (from the file when one was written) and compare with the captured frames.
            let stream: [[UInt8]] =
                try output.map { try IVFReader(path: $0).readAll().map(\.bytes) }
                ?? record.encodedBytes
            let decoder = try VP8Decoder()
            var error = PictureError()
            var compared = 0
            var decodedCount = 0
            for (index, bytes) in stream.enumerated() {
                guard let picture = try decoder.decode(bytes) else { continue }
                decodedCount += 1
                guard index < record.copies.count,
                    let frameError = PictureError(I420Picture(copying: picture), record.copies[index])
                else { continue }
                error = error + frameError
                compared += 1
            }

            let statistics = run.capturer.statistics
            let timing = TimingSummary(timestampsNs: record.timestamps)
            let totalBytes = record.encoded.map(\.byteCount).reduce(0, +)
            let streamSeconds = Double(record.encoded.count) / max(1, granted.fps)
            let result = Output(
                device: DeviceSummary(resolved.device), pixelFormat: granted.pixelFormat.fourCC,
                width: granted.dimensions.width, height: granted.dimensions.height,
                requestedFps: run.selection.fps, grantedFps: granted.fps, paced: !unpaced,
                orientation: orientation.rawValue,
                rotation: record.rotations.sorted().last ?? run.capturer.rotation.degrees,
                framesCaptured: statistics.framesCaptured, framesDelivered: statistics.framesDelivered,
                framesDropped: statistics.framesDropped,
                framesEncoded: record.encoded.count, framesDroppedByEncoder: record.droppedByEncoder,
                keyFrames: record.encoded.filter(\.isKeyFrame).count, fps: timing.fps,
                jitterMs: timing.jitterMs, timing: timing, arrival: TimingSummary(timestampsNs: record.arrivals),
                latencyMs: LatencySummary(samplesMs: record.latenciesMs), bytes: totalBytes,
                bitrateKbps: streamSeconds > 0 ? (Double(totalBytes) * 8 / 1000 / streamSeconds).rounded(places: 1) : 0,
                targetBitrateKbps: bitrate, framesDecoded: decodedCount, psnr: error.psnr.rounded(places: 2),
                psnrY: error.lumaPSNR.rounded(places: 2), psnrFrames: compared, output: output)
            if global.json { try printJSON(result) } else { print(Self.text(result)) }
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
                latency:     capture to encoded p50 \(ms(r.latencyMs.p50)) ms, p99 \(ms(r.latencyMs.p99)) ms
                loopback:    \(r.framesDecoded) frames decoded, PSNR \(r.psnr) dB (Y \(r.psnrY) dB) over \
                \(r.psnrFrames) frames
                """ + (r.output.map { "\noutput:      \($0)" } ?? "")
        }
    }
}
