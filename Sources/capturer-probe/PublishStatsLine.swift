import CaptureCall
import CaptureCore
import CaptureWebRTC

extension CapturerProbe.Publish {
    /// One `--stats-interval` line: what the congestion controller, the pacer and the encoder did in the last
    /// interval (rates over the interval; the rest as it stands at its end). Times on the publisher's monotonic clock,
    /// in seconds since the stream started.
    struct StatsLine: Codable, Sendable, Hashable {
        var schemaVersion = jsonSchemaVersion
        /// Seconds since the publication started.
        var t: Double
        /// The send-side estimate (transport-wide), kbit/s; nil without transport-wide feedback.
        var estimateKbps: Int?
        /// What decided the estimate (delayBased, lossBased, probe, receiverCeiling…).
        var estimateLimitation: String?
        /// The encoder's target, kbit/s.
        var targetKbps: Int
        /// What the stream sent (media, RTX and padding, SRTP included), kbit/s.
        var sentKbps: Double
        /// What the feedback acknowledged, kbit/s.
        var ackedKbps: Int?
        /// The pacer's queue: how long its oldest packet waited, ms, and its bytes.
        var pacerQueueMs: Double?
        var pacerQueueBytes: Int?
        /// The round-trip time from the last receiver report, ms.
        var rttMs: Double?
        /// The share of packets the transport-wide feedback reported lost in the interval (else the last receiver
        /// report's fraction lost).
        var loss: Double
        /// The size being sent and the frames encoded a second over the interval.
        var width: Int?
        var height: Int?
        var fps: Double
        /// W3C qualityLimitationReason: none, bandwidth, cpu.
        var limitation: String
        /// Whether the encoder is told to drop frames (the congestion window full, or over a second queued).
        var droppingFrames: Bool
        /// With `--simulcast`, each layer, lowest first.
        var layers: [LayerLine]?
    }

    /// One simulcast layer in a ``StatsLine``.
    struct LayerLine: Codable, Sendable, Hashable {
        /// 0 is the lowest resolution.
        var index: Int
        var width: Int
        var height: Int
        /// Whether the allocator has it on (encoded and sent).
        var active: Bool
        /// Its share of the target, kbit/s.
        var targetKbps: Int
        /// What its encoder produced over the interval, kbit/s, and frames a second.
        var encodedKbps: Double
        var fps: Double
    }

    /// What the previous line was computed from.
    struct StatsSample {
        var ns: UInt64
        var bytes: Int
        var frames: Int
        var reportedLost: Int
        var reportedReceived: Int
        /// Each simulcast layer's frames and encoded bytes.
        var layers: [(frames: Int, bytes: Int)]
    }

    /// The line for the interval from `previous` to `statistics` at `nowNs` (and the sample the next starts from).
    static func statsLine(
        _ statistics: WHIPPublisherStatistics, previous: StatsSample?, startNs: UInt64, nowNs: UInt64
    ) -> (StatsLine, StatsSample) {
        let sent = statistics.sender ?? VideoSenderStatistics()
        let encoded = statistics.pipeline ?? SendPipelineStatistics()
        let twcc = statistics.transport.transportWideCC
        let pacer = statistics.transport.pacer
        // Every stream's bytes: with simulcast, each layer's sender counts its own.
        let senders = statistics.layerSenders.isEmpty ? [sent] : statistics.layerSenders
        let bytes = senders.reduce(0) { $0 + $1.bytes + $1.retransmittedBytes + $1.paddingBytes }
        let sample = StatsSample(
            ns: nowNs, bytes: bytes, frames: encoded.framesEncoded, reportedLost: twcc.packetsReportedLost,
            reportedReceived: twcc.packetsReportedReceived,
            layers: encoded.layers.map { ($0.framesEncoded, $0.bytesEncoded) })
        let seconds = previous.map { Double(nowNs &- $0.ns) / 1e9 } ?? 0
        func perSecond(_ now: Int, _ before: Int?) -> Double {
            guard let before, seconds > 0 else { return 0 }
            return Double(now - before) / seconds
        }
        let lost = twcc.packetsReportedLost - (previous?.reportedLost ?? 0)
        let received = twcc.packetsReportedReceived - (previous?.reportedReceived ?? 0)
        let twccLoss = lost + received > 0 ? Double(lost) / Double(lost + received) : 0
        let loss = twcc.isSending ? twccLoss : sent.remoteFractionLost
        let layers = encoded.layers.enumerated().map { position, layer in
            let before = previous?.layers.indices.contains(position) == true ? previous?.layers[position] : nil
            return LayerLine(
                index: layer.index, width: layer.dimensions.width, height: layer.dimensions.height,
                active: layer.isActive, targetKbps: layer.targetKbps,
                encodedKbps: (perSecond(layer.bytesEncoded, before?.bytes) * 8 / 1_000).rounded(places: 1),
                fps: perSecond(layer.framesEncoded, before?.frames).rounded(places: 1))
        }
        var line = StatsLine(
            t: (Double(nowNs &- startNs) / 1e9).rounded(places: 2),
            estimateKbps: twcc.estimatedBitrate.map { $0 / 1_000 },
            estimateLimitation: twcc.limitation, targetKbps: encoded.currentTargetKbps,
            sentKbps: (perSecond(bytes, previous?.bytes) * 8 / 1_000).rounded(places: 1),
            ackedKbps: twcc.acknowledgedBitrate.map { $0 / 1_000 },
            pacerQueueMs: pacer.map { $0.queueDelay.inMilliseconds.rounded(places: 1) },
            pacerQueueBytes: pacer?.queuedBytes, rttMs: sent.roundTripTime.map { $0.inMilliseconds.rounded(places: 1) },
            loss: loss.rounded(places: 3), width: encoded.currentOutputSize?.width,
            height: encoded.currentOutputSize?.height,
            fps: perSecond(encoded.framesEncoded, previous?.frames).rounded(places: 1),
            limitation: encoded.qualityLimitationReason.rawValue, droppingFrames: pacer?.isDroppingFrames ?? false)
        if !layers.isEmpty {
            line.layers = layers
            // The frame rate of the capture as encoded: the top active layer's (each layer counts its own frames).
            line.fps = layers.last(where: \.active)?.fps ?? 0
        }
        return (line, sample)
    }

    /// The line as text.
    static func text(_ line: StatsLine) -> String {
        let size = line.width.flatMap { width in line.height.map { "\(width)x\($0)" } } ?? "-"
        return "t=\(line.t)s estimate \(line.estimateKbps.map(String.init) ?? "-") (\(line.estimateLimitation ?? "-")) "
            + "target \(line.targetKbps) sent \(line.sentKbps) acked \(line.ackedKbps.map(String.init) ?? "-") kbit/s; "
            + "pacer \(line.pacerQueueMs.map { "\($0)" } ?? "-") ms; rtt \(line.rttMs.map { "\($0)" } ?? "-") ms; "
            + "loss \(line.loss); \(size) @ \(line.fps) fps; limited by \(line.limitation)"
            + (line.droppingFrames ? "; dropping frames" : "")
            + (line.layers ?? []).map { layer in
                "\n  layer \(layer.index) \(layer.width)x\(layer.height) "
                    + (layer.active
                        ? "on: target \(layer.targetKbps) encoded \(layer.encodedKbps) kbit/s @ \(layer.fps) fps"
                        : "off")
            }.joined()
    }
}
