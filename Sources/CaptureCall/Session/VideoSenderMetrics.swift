internal import CaptureCore
internal import CoreMetrics

/// A ``VideoSender``'s metrics (component `rtp_sender`, see CaptureCore's Metrics article), made once per sender so
/// that updating them per frame or per RTCP packet allocates nothing. A no-op until the app bootstraps a
/// swift-metrics backend.
final class VideoSenderMetrics: Sendable {
    private let frames: Counter
    private let packets: Counter
    private let bytes: Counter
    private let keyFrames: Counter
    private let sendErrors: Counter
    private let plis: Counter
    private let firs: Counter
    private let nacks: Counter
    private let retransmissions: Counter
    private let rembs: Counter
    private let rtcpMalformed: Counter
    private let roundTripTime: CoreMetrics.Timer
    private let glassToWire: CoreMetrics.Timer
    private let requestedBitrate: Gauge
    private let fractionLost: Gauge

    init(deviceID: String, factory: any MetricsFactory) {
        let scope = CaptureMetricsScope(component: "rtp_sender", deviceID: deviceID, factory: factory)
        frames = scope.counter("frames")
        packets = scope.counter("packets")
        bytes = scope.counter("bytes")
        keyFrames = scope.counter("key_frames")
        sendErrors = scope.counter("send_errors")
        plis = scope.counter("pli_received")
        firs = scope.counter("fir_received")
        nacks = scope.counter("nack_received")
        retransmissions = scope.counter("retransmissions")
        rembs = scope.counter("remb_received")
        rtcpMalformed = scope.counter("rtcp_malformed")
        roundTripTime = scope.timer("rtt")
        glassToWire = scope.timer("glass_to_wire")
        requestedBitrate = scope.gauge("requested_bitrate_kbps")
        fractionLost = scope.gauge("remote_fraction_lost")
    }

    /// One frame went out as `packets` packets of `bytes` bytes in all, `latencyNs` after its capture.
    func frame(packets: Int, bytes: Int, errors: Int, isKeyFrame: Bool, latencyNs: UInt64) {
        frames.increment()
        self.packets.increment(by: packets)
        self.bytes.increment(by: bytes)
        if errors > 0 { sendErrors.increment(by: errors) }
        if isKeyFrame { keyFrames.increment() }
        glassToWire.recordNanoseconds(Int64(clamping: latencyNs))
    }

    /// `count` packets were sent again in answer to a NACK.
    func retransmitted(_ count: Int) {
        if count > 0 { retransmissions.increment(by: count) }
    }

    /// What the peer's RTCP said.
    enum Feedback {
        case pli, fir, nack, malformed
        case bitrateRequest(kbps: Int)
        case report(fractionLost: Double, roundTripNs: Int64?)
    }

    /// Counts one piece of RTCP feedback.
    func received(_ feedback: Feedback) {
        switch feedback {
        case .pli: plis.increment()
        case .fir: firs.increment()
        case .nack: nacks.increment()
        case .malformed: rtcpMalformed.increment()
        case .bitrateRequest(let kbps):
            rembs.increment()
            requestedBitrate.record(kbps)
        case .report(let lost, let rtt):
            fractionLost.record(lost)
            if let rtt { roundTripTime.recordNanoseconds(rtt) }
        }
    }
}
