import ArgumentParser
import CaptureCall
import CaptureCore
import CaptureNet
import CaptureRTP
import CaptureVP8
import Foundation

extension CapturerProbe {
    /// `capturer-probe send`: capture, encode and send VP8 over RTP (optionally SRTP) to a receiver.
    struct Send: AsyncParsableCommand, ProbeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Capture, encode to VP8 and send it over RTP/RTCP (optionally SRTP) to HOST:PORT; report "
                + "frames, packets, key frames, bit rate, RTT and encoder-queue drops.")

        @OptionGroup var global: GlobalOptions
        @OptionGroup var source: DeviceOptions
        @OptionGroup var request: RequestOptions

        @Option(
            help: ArgumentHelp(
                "Where to send RTP (RTCP goes to the next port unless --rtcp-mux).", valueName: "HOST:PORT"))
        var to: String

        @Option(
            help: ArgumentHelp("Write the session description here before the first packet.", valueName: "file.sdp"))
        var sdp: String?

        @Flag(help: "Write the session description (--sdp) and exit, so that a receiver can be started first.")
        var sdpOnly = false

        @Flag(help: "Protect RTP and RTCP with SRTP (AES_CM_128_HMAC_SHA1_80), announced with a=crypto.")
        var srtp = false

        @Option(
            help: ArgumentHelp(
                "The SRTP master key and salt (RFC 4568 inline base64); implies --srtp.", valueName: "base64"))
        var srtpKey: String?

        @Flag(
            help: """
                Let the resolution and then the frame rate follow the bit rate (QP and per-size rate limits, as \
                publish does); without it, send keeps the size asked for.
                """)
        var qualityScaling = false

        @Flag(help: "Send RTCP on the RTP port (a=rtcp-mux).")
        var rtcpMux = false

        @Flag(
            help: """
                Number every packet with the transport-wide sequence number (a=extmap:3, a=rtcp-fb transport-cc), \
                for a receiver that feeds back (capturer-probe receive --sdp reads it).
                """)
        var transportCC = false

        @Option(help: ArgumentHelp("VP8 start bit rate in kbit/s (REMB and TMMBR move it).", valueName: "kbps"))
        var bitrate = 1_000

        @Option(help: ArgumentHelp("The largest RTP packet in bytes.", valueName: "bytes"))
        var mtu = 1_200

        @Option(
            help: ArgumentHelp(
                "Send a key frame at least this often, for receivers that send no PLI.", valueName: "seconds"))
        var keyFrameInterval: Double?

        @Option(
            help: ArgumentHelp(
                "VP8 temporal layers: 1, 2 (L1T2) or 3 (L1T3); the payload descriptor carries TID, Y and TL0PICIDX.",
                valueName: "N"))
        var temporalLayers = 1

        @Option(help: "Frames to send (default 300 unless --seconds is given).")
        var frames: Int?

        @Option(help: "Send for this many seconds instead of a frame count.")
        var seconds: Double?

        func validate() throws {
            if frames != nil, seconds != nil { throw ValidationError("give either --frames or --seconds, not both") }
            if let frames, frames < 1 { throw ValidationError("--frames must be at least 1") }
            if let seconds, !(seconds > 0 && seconds.isFinite) { throw ValidationError("--seconds must be positive") }
            guard (1...100_000).contains(bitrate) else { throw ValidationError("--bitrate must be 1...100000 kbit/s") }
            guard (100...9_000).contains(mtu) else { throw ValidationError("--mtu must be 100...9000 bytes") }
            guard (1...3).contains(temporalLayers) else { throw ValidationError("--temporal-layers must be 1, 2 or 3") }
            if let keyFrameInterval, !(keyFrameInterval > 0 && keyFrameInterval.isFinite) {
                throw ValidationError("--key-frame-interval must be positive")
            }
            if sdpOnly, sdp == nil { throw ValidationError("--sdp-only needs --sdp FILE") }
        }

        struct Output: Codable {
            var schemaVersion = jsonSchemaVersion
            var to: String
            var srtp: Bool
            var sdp: String?
            var ssrc: UInt32
            var width: Int
            var height: Int
            var fps: Double
            var framesCaptured: Int
            var framesEncoded: Int
            var framesSent: Int
            var droppedAtEncoderQueue: Int
            var packets: Int
            var bytes: Int
            var overheadBytes: Int
            var keyFramesSent: Int
            var keyFramesRequested: Int
            var plisReceived: Int
            var firsReceived: Int
            var rembsReceived: Int
            var targetBitrateKbps: Int
            var bitrateKbps: Double
            var rttMs: Double?
            var sendErrors: Int
            var rtcpSent: Int
            var rtcpMalformed: Int
            var glassToWireMs: LatencyRecorder.Summary
            /// With --transport-cc: transport-wide feedback messages received, and what they reported.
            var transportFeedbackReceived: Int?
            var transportPacketsReportedReceived: Int?
            var transportPacketsReportedLost: Int?
        }

        mutating func run() async throws {
            let remote = try SendSession.address(to)
            let keys = try SendSession.keys(srtp: srtp, base64: srtpKey)
            let packetizer = RTPPacketizerConfiguration(
                maxPacketSize: mtu, transportSequenceNumberExtensionID: transportCC ? 3 : nil)
            let parameters = VideoSessionParameters(
                address: remote.host, port: remote.port, rtcpPort: rtcpMux ? nil : remote.port &+ 1, rtcpMux: rtcpMux,
                payloadType: packetizer.payloadType, framerate: request.fpsLimit,
                transportWideCCExtensionID: packetizer.transportSequenceNumberExtensionID, crypto: keys,
                ssrc: nil, cname: "capturer-probe", sessionName: "capturer-probe send")
            if let sdp { try OutputFile.write(Array(parameters.makeDescription().render().utf8), to: sdp) }
            if sdpOnly {
                if !global.json { print("wrote \(sdp ?? "")") }
                return
            }

            let resolved = try source.resolve()
            let selection = try request.select(on: resolved)
            let sender: VideoSender
            do {
                sender = try VideoSender(
                    configuration: VideoSenderConfiguration(
                        remote: remote, rtcpMux: rtcpMux, packetizer: packetizer, srtp: keys,
                        metricsDeviceID: resolved.device.id))
            } catch {
                throw ProbeFailure(
                    status: error.code == .badAddress ? .badAddress : .failure, message: "\(to): \(error.message)")
            }
            var encoder = VP8EncoderConfiguration(targetBitrateKbps: bitrate, framerate: max(1, selection.fps))
            encoder.temporalLayers = temporalLayers
            if let keyFrameInterval {
                encoder.keyFrameInterval = max(1, Int((keyFrameInterval * max(1, selection.fps)).rounded()))
            }
            let limit = seconds == nil ? (frames ?? 300) : Int.max
            var configuration = SendPipelineConfiguration(encoder: encoder, maxBitrateKbps: max(bitrate, 2_500))
            configuration.qualityScaling.enabled = qualityScaling
            let pipeline = try SendPipeline(
                configuration: configuration, sinks: [FrameLimitedSink(forwardingTo: sender, limit: limit)])
            sender.attach(to: pipeline)
            let deadlineNs = MonotonicClock.nowNs() + UInt64((seconds ?? 3_600) * 1e9)
            let run: CaptureRun
            do {
                run = try await CaptureRun.start(on: resolved, request: request, delegate: pipeline)
            } catch {
                await pipeline.stop()
                throw error
            }
            while sender.statistics.frames < limit, MonotonicClock.nowNs() < deadlineNs,
                case .running = run.capturer.captureState
            {
                try await Task.sleep(for: .milliseconds(10))
            }
            try await run.stop { await pipeline.stop() }

            let sent = sender.statistics
            let twcc = sender.transportWideStatistics
            let encoded = pipeline.statistics
            let granted = run.configuration.granted
            let streamSeconds = Double(max(1, sent.frames)) / max(1, granted.fps)
            let result = Output(
                to: remote.description, srtp: keys != nil, sdp: sdp, ssrc: sender.ssrc,
                width: granted.dimensions.width, height: granted.dimensions.height, fps: granted.fps,
                framesCaptured: run.capturer.statistics.framesCaptured, framesEncoded: encoded.framesEncoded,
                framesSent: sent.frames, droppedAtEncoderQueue: encoded.droppedAtEncoderQueue, packets: sent.packets,
                bytes: sent.bytes, overheadBytes: sent.overheadBytes, keyFramesSent: sent.keyFramesSent,
                keyFramesRequested: sent.keyFramesRequested, plisReceived: sent.plisReceived,
                firsReceived: sent.firsReceived, rembsReceived: sent.rembsReceived,
                targetBitrateKbps: encoded.currentTargetKbps,
                bitrateKbps: (Double(sent.bytes) * 8 / 1_000 / streamSeconds).rounded(places: 1),
                rttMs: sent.roundTripTime.map { $0.inMilliseconds.rounded(places: 2) }, sendErrors: sent.sendErrors,
                rtcpSent: sent.rtcpSent, rtcpMalformed: sent.rtcpMalformed, glassToWireMs: sent.glassToWire,
                transportFeedbackReceived: twcc?.feedbackMessages,
                transportPacketsReportedReceived: twcc?.packetsReportedReceived,
                transportPacketsReportedLost: twcc?.packetsReportedLost)
            if global.json { try printJSON(result) } else { print(Self.text(result)) }
        }

        static func text(_ r: Output) -> String {
            """
            to:          \(r.to)\(r.srtp ? " (SRTP)" : "") ssrc \(r.ssrc)\(r.sdp.map { ", SDP \($0)" } ?? "")
            video:       \(r.width)x\(r.height) at \(Text.fps(r.fps)) fps
            frames:      \(r.framesCaptured) captured, \(r.framesEncoded) encoded, \(r.framesSent) sent, \
            \(r.droppedAtEncoderQueue) dropped at the encoder queue
            RTP:         \(r.packets) packets, \(r.bytes) bytes (\(r.overheadBytes) overhead), \(r.bitrateKbps) kbit/s \
            (target \(r.targetBitrateKbps))
            key frames:  \(r.keyFramesSent) sent, \(r.keyFramesRequested) requested (\(r.plisReceived) PLI, \
            \(r.firsReceived) FIR), \(r.rembsReceived) REMB
            RTCP:        \(r.rtcpSent) sent, \(r.rtcpMalformed) malformed received, RTT \
            \(r.rttMs.map { "\($0) ms" } ?? "unknown")
            latency:     glass to wire p50 \(r.glassToWireMs.p50Ms.rounded(places: 2)) ms, p99 \
            \(r.glassToWireMs.p99Ms.rounded(places: 2)) ms
            errors:      \(r.sendErrors) send errors\(r.transportFeedbackReceived.map { feedback in
                "\nTWCC:        \(feedback) feedback messages: \(r.transportPacketsReportedReceived ?? 0) received, "
                    + "\(r.transportPacketsReportedLost ?? 0) lost"
            } ?? "")
            """
        }
    }
}

/// Turning `send`/`receive` arguments into session settings, with the tool's exit statuses for bad input.
enum SendSession {
    /// `HOST:PORT` or `[V6]:PORT`, or exit 11.
    static func address(_ text: String) throws -> SocketAddress {
        do {
            let address = try SocketAddress(text)
            guard address.port != 0 else {
                throw ProbeFailure(status: .badAddress, message: "\(text): port 0 is not a destination")
            }
            return address
        } catch let error as SocketAddressError {
            throw ProbeFailure(
                status: .badAddress, message: "\(text): not a HOST:PORT address (\(error))",
                hint: "use a numeric address such as 127.0.0.1:5004 or [::1]:5004")
        }
    }

    /// The SRTP keys: given (base64, exit 14 when malformed), fresh when `srtp` is set, else `nil`.
    static func keys(srtp: Bool, base64: String?) throws -> SRTPKeyingMaterial? {
        if let base64 {
            do {
                return try SRTPKeyingMaterial(base64: base64)
            } catch {
                throw ProbeFailure(
                    status: .srtpKeyRejected, message: "--srtp-key: not an SRTP master key and salt (\(error))",
                    hint: "give the 40-character base64 inline key of an a=crypto line")
            }
        }
        return srtp ? SRTPKeyingMaterial.random() : nil
    }
}
