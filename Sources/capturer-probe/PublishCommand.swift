import ArgumentParser
import CaptureCall
import CaptureCore
import CaptureICE
import CaptureRTP
import CaptureVP8
import CaptureWebRTC
import Dispatch
import Foundation
import Glibc

extension CapturerProbe {
    struct Publish: AsyncParsableCommand, ProbeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Publish the camera over WebRTC to a WHIP endpoint (RFC 9725), e.g. Janus; report ICE, DTLS, "
                + "NACKs, retransmissions, PLIs, key frames and bit rate; DELETE the session at the end (also on "
                + "SIGINT and SIGTERM).")

        @OptionGroup var global: GlobalOptions
        @OptionGroup var source: DeviceOptions
        @OptionGroup var request: RequestOptions

        @Option(help: ArgumentHelp("The WHIP endpoint URL.", valueName: "URL"))
        var whip: String

        @Option(help: ArgumentHelp("A bearer token for the endpoint.", valueName: "T"))
        var token: String?

        @Option(
            help: ArgumentHelp(
                "The highest bit rate in kbit/s: the congestion controller's ceiling (REMB and TMMBR cap it lower); "
                    + "default 2500, or with --simulcast what the layers can use (libwebrtc's table: 3150 at 1280x720).",
                valueName: "kbps"))
        var bitrate: Int?

        @Option(
            help: ArgumentHelp(
                "The bit rate to start at, kbit/s (default 300 with transport-wide congestion control, as libwebrtc; "
                    + "1000 with receiver reports, which climb slowly).", valueName: "kbps"))
        var startBitrate: Int?

        @Option(help: ArgumentHelp("The lowest bit rate the controller may set, kbit/s.", valueName: "kbps"))
        var minBitrate = 30

        @Option(
            help: ArgumentHelp(
                "Print a line every SECONDS (JSON lines with --json): estimate, target, sent and acknowledged rate, "
                    + "pacer queue, RTT, loss, the size and frame rate sent, and what limits them.",
                valueName: "SECONDS"))
        var statsInterval: Double?

        @Option(help: "The device orientation, sent as the video-orientation extension (or applied to the pixels).")
        var orientation: DeviceOrientation = .unknown

        @Option(
            name: .customLong("ice-server"),
            help: ArgumentHelp(
                "A STUN or TURN server (stun:host:port, turn:host:port with --ice-username and --ice-credential); "
                    + "repeat for more.", valueName: "URL"))
        var iceServers: [String] = []

        @Option(help: ArgumentHelp("The username for the --ice-server TURN servers.", valueName: "U"))
        var iceUsername: String?

        @Option(help: ArgumentHelp("The credential (password) for the --ice-server TURN servers.", valueName: "C"))
        var iceCredential: String?

        @Option(help: "Which candidates to offer: all, or relay (only relayed ones, through a TURN server).")
        var iceTransportPolicy: ICETransportPolicy = .all

        @Option(
            help: """
                What steers the bit rate: transport-wide (the default: the send-side estimate from TWCC feedback, \
                paced, when the endpoint negotiates it), or receiver-reports (loss, under REMB).
                """)
        var congestionControl: CongestionControlMode = .transportWide

        @Flag(
            help: ArgumentHelp(
                "Probe the estimate when it has gone untested (a sawtooth period without overuse): faster recovery"
                    + " when a path widens; off by default, as a token-bucket shaper's burst can mislead it."))
        var probeStaleEstimate = false

        @Option(
            help: ArgumentHelp(
                "VP8 temporal layers: 1, 2 (L1T2: 15 + 15 fps) or 3 (L1T3: 7.5 + 7.5 + 15 fps), which an SFU thins by"
                    + " layer; default 1, or 3 with --simulcast (libwebrtc's default).", valueName: "N"))
        var temporalLayers: Int?

        @Flag(
            help: ArgumentHelp(
                "Simulcast: up to three encodings (rids l, m, h; each its own SSRC and RTX), as many as the capture"
                    + " size allows (libwebrtc's rule: 1280x720 gives 3, 640x480 2), the target shared among them"
                    + " bottom-up; an SFU serves each viewer the one that suits it."))
        var simulcast = false

        @Option(help: ArgumentHelp("With --simulcast, at most this many encodings: 2 or 3.", valueName: "N"))
        var simulcastLayers = 3

        @Option(help: "Frames to send (default 300 unless --seconds is given).")
        var frames: Int?

        @Option(help: "Send for this many seconds instead of a frame count.")
        var seconds: Double?

        @Option(help: ArgumentHelp("Drop this share of first transmissions (never retransmissions).", valueName: "PCT"))
        var loss: Double?

        @Option(help: "The seed of --loss, so that a run can be repeated.")
        var seed: UInt64 = 1

        @Flag(help: "Offer no RTX: NACKs are then only counted (to compare recovery with and without).")
        var noRetransmission = false

        @Option(help: ArgumentHelp("How long ICE and DTLS may take after the answer.", valueName: "seconds"))
        var connectTimeout = 10.0

        func validate() throws {
            guard let url = URL(string: whip), let scheme = url.scheme, ["http", "https"].contains(scheme),
                url.host != nil
            else { throw ValidationError("--whip must be an http(s) URL") }
            if frames != nil, seconds != nil { throw ValidationError("give either --frames or --seconds, not both") }
            if let frames, frames < 1 { throw ValidationError("--frames must be at least 1") }
            if let seconds, !(seconds > 0 && seconds.isFinite) { throw ValidationError("--seconds must be positive") }
            if let temporalLayers, !(1...3).contains(temporalLayers) {
                throw ValidationError("--temporal-layers must be 1, 2 or 3")
            }
            guard (2...3).contains(simulcastLayers) else { throw ValidationError("--simulcast-layers must be 2 or 3") }
            let bitrate = bitrate ?? (simulcast ? 100_000 : 2_500)
            guard (30...100_000).contains(bitrate) else {
                throw ValidationError("--bitrate must be 30...100000 kbit/s")
            }
            guard (30...bitrate).contains(minBitrate) else {
                throw ValidationError("--min-bitrate must be 30 kbit/s up to --bitrate")
            }
            if let startBitrate, !(minBitrate...bitrate).contains(startBitrate) {
                throw ValidationError("--start-bitrate must be between --min-bitrate and --bitrate")
            }
            if let statsInterval, !(statsInterval >= 0.1 && statsInterval <= 3_600) {
                throw ValidationError("--stats-interval must be 0.1...3600 seconds")
            }
            if let loss, !(0...100).contains(loss) { throw ValidationError("--loss must be 0...100 (percent)") }
            for server in iceServers where ICEServer(url: server) == nil {
                throw ValidationError("--ice-server \(server): not a stun:, turn: or turns: URL")
            }
            let turn = iceServers.compactMap { ICEServer(url: $0) }.filter { $0.scheme != .stun }
            if !turn.isEmpty, iceUsername == nil || iceCredential == nil {
                throw ValidationError("a TURN --ice-server needs --ice-username and --ice-credential")
            }
            if iceTransportPolicy == .relay, turn.isEmpty {
                throw ValidationError("--ice-transport-policy relay needs a turn: --ice-server")
            }
            guard connectTimeout > 0, connectTimeout.isFinite else {
                throw ValidationError("--connect-timeout must be positive")
            }
        }

        struct Output: Codable {
            var schemaVersion = jsonSchemaVersion
            var whip: String
            var width: Int
            var height: Int
            var fps: Double
            var orientation: String
            var answeredMs: Double?
            var connectedMs: Double?
            var iceConnectedMs: Double?
            var dtlsConnectedMs: Double?
            var selectedPair: String?
            var selectedPairTypes: String?
            var iceTransportPolicy: String
            var turnState: String?
            var relayedAddress: String?
            var turnError: String?
            /// The ICE servers the endpoint's `Link` headers added (not given already).
            var linkICEServers: [String]
            /// Candidates trickled by PATCH after the offer, and PATCHes refused (405/501) or failed.
            var candidatesTrickled: Int
            var patchesRefused: Int
            var patchesFailed: Int
            var endOfCandidatesSent: Bool
            var framesCaptured: Int
            var framesEncoded: Int
            var framesSent: Int
            var packets: Int
            var bytes: Int
            var keyFramesSent: Int
            var plisReceived: Int
            var firsReceived: Int
            var keyFramesRequested: Int
            var keyFrameRequestsThrottled: Int
            var nacksReceived: Int
            var packetsRequested: Int
            var retransmissions: Int
            var retransmissionsTooOld: Int
            var firstTransmissionsDropped: Int
            var rembsReceived: Int
            var lastRembKbps: Int
            var targetBitrateKbps: Int
            var lossBasedEstimateKbps: Int?
            var bitrateKbps: Double
            var lastFiveSecondsKbps: Double?
            var rttMs: Double?
            var stunIntegrityFailures: Int
            var mediaBlocked: Int
            var sendErrors: Int
            /// Transport-wide congestion control: packets numbered, the endpoint's feedback and what it reported.
            var transportWideCC: TransportWideCCStatistics
            /// The connection's figures in W3C webrtc-stats' names and shapes (times in seconds), as the publication
            /// ended.
            var stats: WebRTCStatsReport?
        }

        mutating func run() async throws {
            let resolved = try source.resolve()
            let selection = try request.select(on: resolved)
            let layers = simulcast ? simulcastLayers : 1
            // With simulcast, the ceiling is what the layers of the selected size can use (every lower layer's target
            // and the top layer's maximum), unless given.
            let bitrate =
                bitrate
                ?? (simulcast
                    ? SimulcastLayout(
                        input: selection.dimensions, maxLayers: layers, temporalLayers: temporalLayers ?? 3
                    ).bitrateRange.upperBound : 2_500)
            let start = startBitrate ?? min(bitrate, congestionControl == .transportWide ? 300 : 1_000)
            var encoder = VP8EncoderConfiguration(targetBitrateKbps: start, framerate: max(1, selection.fps))
            encoder.keyFrameInterval = max(1, Int((max(1, selection.fps) * 10).rounded()))
            encoder.temporalLayers = temporalLayers ?? (simulcast ? 3 : 1)
            var publisherConfiguration = WHIPPublisherConfiguration(
                endpoint: URL(string: whip) ?? URL(fileURLWithPath: "/"), bearerToken: token,
                iceServers: iceServers.compactMap {
                    ICEServer(url: $0, username: iceUsername, credential: iceCredential)
                }, encoder: encoder,
                minBitrateKbps: minBitrate, maxBitrateKbps: bitrate, retransmission: !noRetransmission,
                firstTransmissionLoss: loss.map { SimulatedLoss(percent: $0, seed: seed) },
                connectTimeout: .milliseconds(Int64(connectTimeout * 1_000)),
                metricsDeviceID: resolved.device.id, iceTransportPolicy: iceTransportPolicy,
                congestionControl: congestionControl)
            publisherConfiguration.probesStaleEstimate = probeStaleEstimate
            publisherConfiguration.simulcastLayers = layers
            let publisher = WHIPPublisher(configuration: publisherConfiguration)
            let interrupted = InterruptFlag()
            let signals = interrupted.watch([SIGINT, SIGTERM])
            defer { for source in signals { source.cancel() } }

            let pipeline: SendPipeline
            do {
                pipeline = try await publisher.start()
            } catch {
                await publisher.stop()
                throw Self.failure(error)
            }
            let limit = seconds == nil ? (frames ?? 300) : Int.max
            let deadlineNs = MonotonicClock.nowNs() + UInt64((seconds ?? 3_600) * 1e9)
            let run: CaptureRun
            do {
                run = try await CaptureRun.start(
                    on: resolved, request: request, orientation: orientation, delegate: pipeline)
            } catch {
                await publisher.stop()
                throw error
            }
            // (time, bytes sent) samples of the last five seconds, for the rate the stream settled at.
            var recent: [(ns: UInt64, bytes: Int)] = []
            let streamStartNs = MonotonicClock.nowNs()
            var statsSample = statsInterval.map { _ in
                Self.statsLine(publisher.statistics, previous: nil, startNs: streamStartNs, nowNs: streamStartNs).1
            }
            var nextStatsNs = statsInterval.map { streamStartNs &+ UInt64($0 * 1e9) }
            while MonotonicClock.nowNs() < deadlineNs, !interrupted.isSet, case .running = run.capturer.captureState {
                if case .failed = publisher.transportState { break }
                let sent = publisher.statistics.sender ?? VideoSenderStatistics()
                if sent.frames >= limit { break }
                let nowNs = MonotonicClock.nowNs()
                recent.append((nowNs, publisher.statistics.allStreams.bytes))
                recent.removeAll { nowNs &- $0.ns > 5_000_000_000 }
                if let due = nextStatsNs, nowNs >= due, let statsInterval {
                    let (line, sample) = Self.statsLine(
                        publisher.statistics, previous: statsSample, startNs: streamStartNs, nowNs: nowNs)
                    statsSample = sample
                    if global.json { try printJSONLine(line) } else { print(Self.text(line)) }
                    nextStatsNs = due &+ UInt64(statsInterval * 1e9)
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            var window: Double?
            if let first = recent.first, let last = recent.last, Double(last.ns &- first.ns) / 1e9 >= 2 {
                let seconds = Double(last.ns &- first.ns) / 1e9
                window = (Double(last.bytes - first.bytes) * 8 / 1_000 / seconds).rounded(places: 1)
            }
            let (statistics, stats) = try await run.stop {
                let statistics = publisher.statistics
                let stats = await publisher.statsReport()
                await publisher.stop()
                return (statistics, stats)
            }

            let sent = statistics.sender ?? VideoSenderStatistics()
            let encoded = statistics.pipeline ?? SendPipelineStatistics()
            let granted = run.configuration.granted
            let streamSeconds = Double(max(1, sent.frames)) / max(1, granted.fps)
            let result = Output(
                whip: whip, width: granted.dimensions.width, height: granted.dimensions.height, fps: granted.fps,
                orientation: orientation.rawValue, answeredMs: statistics.answeredAfter.map(Self.ms),
                connectedMs: statistics.connectedAfter.map(Self.ms),
                iceConnectedMs: statistics.transport.iceConnectedAfter.map(Self.ms),
                dtlsConnectedMs: statistics.transport.dtlsConnectedAfter.map(Self.ms),
                selectedPair: statistics.selectedPair, selectedPairTypes: statistics.selectedPairTypes,
                iceTransportPolicy: iceTransportPolicy.rawValue, turnState: statistics.turn.first?.state.rawValue,
                relayedAddress: statistics.turn.first?.relayedAddress.map { "\($0)" },
                turnError: statistics.turn.first?.lastError.map { "\($0)" },
                linkICEServers: statistics.trickle.linkICEServers,
                candidatesTrickled: statistics.trickle.candidatesTrickled,
                patchesRefused: statistics.trickle.patchesRefused, patchesFailed: statistics.trickle.patchesFailed,
                endOfCandidatesSent: statistics.trickle.endOfCandidatesSent,
                framesCaptured: run.capturer.statistics.framesCaptured,
                framesEncoded: encoded.framesEncoded, framesSent: sent.frames, packets: statistics.allStreams.packets,
                bytes: statistics.allStreams.bytes,
                keyFramesSent: sent.keyFramesSent, plisReceived: sent.plisReceived, firsReceived: sent.firsReceived,
                keyFramesRequested: sent.keyFramesRequested, keyFrameRequestsThrottled: sent.keyFrameRequestsThrottled,
                nacksReceived: sent.nacksReceived, packetsRequested: sent.packetsRequested,
                retransmissions: sent.retransmissions, retransmissionsTooOld: sent.retransmissionsTooOld,
                firstTransmissionsDropped: sent.firstTransmissionsDropped, rembsReceived: sent.rembsReceived,
                lastRembKbps: sent.lastRequestedBitrateKbps, targetBitrateKbps: encoded.currentTargetKbps,
                lossBasedEstimateKbps: sent.lossBasedEstimateKbps,
                bitrateKbps: (Double(statistics.allStreams.bytes) * 8 / 1_000 / streamSeconds).rounded(places: 1),
                lastFiveSecondsKbps: window, rttMs: sent.roundTripTime.map { $0.inMilliseconds.rounded(places: 2) },
                stunIntegrityFailures: statistics.ice.integrityFailures,
                mediaBlocked: statistics.transport.mediaBlocked,
                sendErrors: sent.sendErrors, transportWideCC: statistics.transport.transportWideCC, stats: stats)
            if global.json { try printJSON(result) } else { print(Self.text(result)) }
        }

        static func ms(_ duration: Duration) -> Double { duration.inMilliseconds.rounded(places: 1) }

        /// The transport-wide congestion control line of the text report.
        static func text(_ twcc: TransportWideCCStatistics) -> String {
            guard twcc.isSending else { return "not negotiated" }
            return "\(twcc.packetsSent) packets numbered (\(twcc.retransmissionsSent) RTX), "
                + "\(twcc.feedbackReceived) feedback messages: \(twcc.packetsReportedReceived) received, "
                + "\(twcc.packetsReportedLost) lost, \(twcc.bytesInFlight) bytes in flight"
                + (twcc.estimatedBitrate.map { "; estimate \($0 / 1_000) kbit/s (\(twcc.limitation ?? "-"))" } ?? "")
        }

        static func failure(_ error: WHIPPublishError) -> ProbeFailure {
            switch error {
            case .whip, .unusableAnswer:
                ProbeFailure(
                    status: .signallingFailed, message: "\(error)",
                    hint: "check the WHIP URL and token; the endpoint's status and message are quoted above")
            case .transport:
                ProbeFailure(
                    status: .transportFailed, message: "\(error)",
                    hint: "the server's candidates must be reachable over UDP from this machine")
            case .pipeline, .invalidState:
                ProbeFailure(status: .failure, message: "\(error)")
            }
        }

        static func text(_ r: Output) -> String {
            """
            whip:        \(r.whip)
            video:       \(r.width)x\(r.height) at \(Text.fps(r.fps)) fps, orientation \(r.orientation)
            connect:     answer \(r.answeredMs.map { "\($0) ms" } ?? "-"), ICE \
            \(r.iceConnectedMs.map { "\($0) ms" } ?? "-"), DTLS \(r.dtlsConnectedMs.map { "\($0) ms" } ?? "-") \
            (pair \(r.selectedPair ?? "none"))
            ICE:         policy \(r.iceTransportPolicy), \(r.selectedPairTypes ?? "no pair")\
            \(r.turnState.map { ", TURN \($0)" } ?? "")\(r.relayedAddress.map { ", relayed \($0)" } ?? "")\
            \(r.turnError.map { ", TURN error: \($0)" } ?? "")
            trickle:     \(r.candidatesTrickled) candidates PATCHed\
            \(r.endOfCandidatesSent ? " + end-of-candidates" : ""), \
            \(r.patchesRefused) refused, \(r.patchesFailed) failed; Link servers: \
            \(r.linkICEServers.isEmpty ? "none" : r.linkICEServers.joined(separator: " "))
            frames:      \(r.framesCaptured) captured, \(r.framesEncoded) encoded, \(r.framesSent) sent
            RTP:         \(r.packets) packets, \(r.bytes) bytes, \(r.bitrateKbps) kbit/s (target \
            \(r.targetBitrateKbps), last REMB \(r.lastRembKbps) in \(r.rembsReceived))
            recovery:    \(r.nacksReceived) NACKs for \(r.packetsRequested) packets, \(r.retransmissions) resent, \
            \(r.retransmissionsTooOld) too old; \(r.firstTransmissionsDropped) first transmissions dropped on purpose
            key frames:  \(r.keyFramesSent) sent, \(r.keyFramesRequested) requested (\(r.plisReceived) PLI, \
            \(r.firsReceived) FIR, \(r.keyFrameRequestsThrottled) within 300 ms)
            RTT:         \(r.rttMs.map { "\($0) ms" } ?? "unknown")
            TWCC:        \(Self.text(r.transportWideCC))
            errors:      \(r.sendErrors) send errors, \(r.mediaBlocked) packets with no path, \
            \(r.stunIntegrityFailures) STUN integrity failures
            """
        }
    }
}

extension WHIPPublisherStatistics {
    /// The media packets and bytes of every stream sent (each simulcast layer's, or the one stream's).
    var allStreams: (packets: Int, bytes: Int) {
        let senders = layerSenders.isEmpty ? (sender.map { [$0] } ?? []) : layerSenders
        return (senders.reduce(0) { $0 + $1.packets }, senders.reduce(0) { $0 + $1.bytes })
    }
}

extension ICETransportPolicy: ExpressibleByArgument {}
extension CongestionControlMode: ExpressibleByArgument {}
