import ArgumentParser
import CaptureCall
import CaptureCore
import CaptureNet
import CapturePreview
import CaptureVP8
import Foundation

extension CapturerProbe {
    struct Preview: AsyncParsableCommand, ProbeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Serve a live preview of the camera: a page at / that plays it with its figures, and a WHEP "
                + "endpoint at /whep for any WHEP player (CORS open). Localhost only unless --bind says otherwise; "
                + "runs until SIGINT or SIGTERM (or --seconds).")

        @OptionGroup var global: GlobalOptions
        @OptionGroup var source: DeviceOptions
        @OptionGroup var request: RequestOptions

        @Option(help: "The HTTP port.")
        var port = 8090

        @Option(help: ArgumentHelp("The address to listen on (0.0.0.0 opens it to the LAN).", valueName: "ADDR"))
        var bind = "127.0.0.1"

        @Option(help: ArgumentHelp("VP8 start bit rate in kbit/s (viewers' REMB moves it).", valueName: "kbps"))
        var bitrate = 1_000

        @Option(help: "The device orientation, sent as the video-orientation extension (or applied to the pixels).")
        var orientation: DeviceOrientation = .unknown

        @Option(help: "Serve for this many seconds, then stop (default: until SIGINT or SIGTERM).")
        var seconds: Double?

        @Flag(
            help: ArgumentHelp(
                "Encode simulcast layers (1280x720: 320x180, 640x360 and 1280x720) and serve each viewer the layer "
                    + "its link carries, switching at key frames; the page shows each viewer's layer."))
        var simulcast = false

        func validate() throws {
            guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0...65535") }
            guard (try? SocketAddress("\(bind):0")) != nil || (try? SocketAddress("[\(bind)]:0")) != nil else {
                throw ValidationError("--bind must be a numeric IPv4 or IPv6 address")
            }
            guard (30...100_000).contains(bitrate) else {
                throw ValidationError("--bitrate must be 30...100000 kbit/s")
            }
            if let seconds, !(seconds > 0 && seconds.isFinite) { throw ValidationError("--seconds must be positive") }
        }

        struct Output: Codable {
            var schemaVersion = jsonSchemaVersion
            var url: String
            var width: Int
            var height: Int
            var fps: Double
            var framesCaptured: Int
            var framesEncoded: Int
            var viewersStarted: Int
            var viewersFailed: Int
            var requests: Int
            var malformedRequests: Int
        }

        mutating func run() async throws {
            let resolved = try source.resolve()
            let selection = try request.select(on: resolved)
            let encoder = VP8EncoderConfiguration(targetBitrateKbps: bitrate, framerate: max(1, selection.fps))
            let address = (try? SocketAddress("\(bind):0")) ?? (try? SocketAddress("[\(bind)]:0"))
            // Candidates on the address the page is served from: loopback for localhost, every interface for a
            // wildcard, that address otherwise.
            let hosts: [SocketAddress]? =
                bind == "0.0.0.0" || bind == "::" ? nil : address.map { [$0] }
            let session = try PreviewSession(
                encoder: encoder, hostAddresses: hosts, simulcast: simulcast ? SimulcastConfiguration() : nil)
            let server = PreviewServer(handler: session)
            let boundPort: Int
            do {
                boundPort = try await server.listen(bind: bind, port: port)
            } catch {
                await session.stop()
                throw ProbeFailure(
                    status: .portInUse, message: "cannot listen on \(bind):\(port): \(error)",
                    hint: "choose another --port, or stop what listens there")
            }
            let url = "http://\(bind.contains(":") ? "[\(bind)]" : bind):\(boundPort)/"
            let interrupted = InterruptFlag()
            let signals = interrupted.watch([SIGINT, SIGTERM])
            defer { for source in signals { source.cancel() } }
            let run: CaptureRun
            do {
                run = try await CaptureRun.start(
                    on: resolved, request: request, orientation: orientation, delegate: session.pipeline)
            } catch {
                await server.stop()
                await session.stop()
                throw error
            }
            let granted = run.configuration.granted
            session.describeCapture(
                width: granted.dimensions.width, height: granted.dimensions.height, fps: granted.fps,
                rotation: CaptureRules.rotation(
                    for: orientation, position: resolved.device.position, previous: .degrees0
                )
                .rawValue)
            if !global.json { print("preview: \(url) (WHEP: \(url)whep); Ctrl-C to stop") }
            let deadlineNs = seconds.map { MonotonicClock.nowNs() + UInt64($0 * 1e9) } ?? UInt64.max
            while !interrupted.isSet, MonotonicClock.nowNs() < deadlineNs, case .running = run.capturer.captureState {
                try await Task.sleep(for: .milliseconds(50))
            }
            try await run.stop {
                await server.stop()
                await session.stop()
            }
            let counts = session.viewerCounts
            let requests = server.statistics.snapshot
            let result = Output(
                url: url, width: granted.dimensions.width, height: granted.dimensions.height, fps: granted.fps,
                framesCaptured: run.capturer.statistics.framesCaptured,
                framesEncoded: session.pipeline.statistics.framesEncoded, viewersStarted: counts.started,
                viewersFailed: counts.failed, requests: requests.requests, malformedRequests: requests.malformed)
            if global.json {
                try printJSON(result)
            } else {
                print(
                    "preview: \(result.framesEncoded) frames encoded for \(result.viewersStarted) viewers "
                        + "(\(result.viewersFailed) failed to connect), \(result.requests) requests "
                        + "(\(result.malformedRequests) malformed)")
                let layers = session.pipeline.statistics.layers
                if !layers.isEmpty {
                    let described = layers.map { "\($0.dimensions.width)x\($0.dimensions.height) \($0.framesEncoded)" }
                    print("preview: simulcast frames per layer: \(described.joined(separator: ", "))")
                }
            }
        }
    }
}
