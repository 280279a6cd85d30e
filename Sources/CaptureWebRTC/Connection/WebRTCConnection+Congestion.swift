internal import CaptureCall
internal import CaptureCongestion
internal import CaptureRTP

/// The connection's send-side congestion control: GoogCC's estimator (CaptureCongestion) fed with what the
/// transport-wide feedback reports, the receiver reports' round-trip times and REMB/TMMBR ceilings; its target goes to
/// the encoder as ``ConnectionEvent/targetBitrateChanged(kbps:reason:)``.
///
/// ## When
/// Only when the stream asks for it (``ConnectionMedia/congestionControl`` is ``CongestionControlMode/transportWide``)
/// and transport-wide congestion control was negotiated. The stream's own loss-based estimate from receiver reports
/// is then off: the estimator has its own, from the feedback's losses.
///
/// ## Probes, pacing and the window
/// The estimator's probe clusters go to the pacer (``Pacing``), which sends them at their rate; its pacing rate is
/// the pacer's. The congestion window (libwebrtc's pushback: bytes in flight and queued over (RTT + 350 ms) × the
/// target) trims the encoder's target while full and tells the encoder to drop frames, so that a feedback path that
/// went dead does not let the queue grow without bound.
///
/// ## Performance
/// The feedback is converted into a reused ``TransportPacketsFeedback`` whose array keeps its capacity: after the
/// first few messages, no allocation per feedback or per packet.
struct CongestionControl {
    var estimator: SendSideBandwidthEstimator
    /// The estimator's input, reused.
    var feedback: TransportPacketsFeedback
    /// The congestion window's pushback on the encoder's target.
    var pushback = CongestionWindowPushback()
    /// The last round-trip time measured (receiver reports), for the window.
    var roundTripTime: Duration?

    init(
        minimumKbps: Int, startKbps: Int, maximumKbps: Int, probesStaleEstimate: Bool = false,
        at start: ContinuousClock.Instant
    ) {
        var configuration = SendSideBandwidthEstimator.Configuration(
            minimumBitrate: minimumKbps * 1_000, startBitrate: startKbps * 1_000, maximumBitrate: maximumKbps * 1_000)
        configuration.probesStaleEstimate = probesStaleEstimate
        // The pacer's window pushes back on a standing queue (libwebrtc's split of the work).
        configuration.drainsStandingQueue = true
        estimator = SendSideBandwidthEstimator(configuration: configuration.normalized, at: start)
        feedback = TransportPacketsFeedback(receivedAt: start, results: [])
        feedback.results.reserveCapacity(256)
    }
}

extension WebRTCConnection {
    // MARK: Congestion control

    /// Feeds one transport-wide report to the estimator, then applies its target.
    func estimate(from report: TransportFeedbackReport, nowNs: UInt64) {
        guard var control = congestion else { return }
        congestion = nil  // the stored value is mutated alone (no copy of its arrays)
        control.feedback.receivedAt = clock.instant(atNanoseconds: report.receivedAtNs)
        control.feedback.results.removeAll(keepingCapacity: true)
        for packet in report.packets {
            control.feedback.results.append(
                PacketResult(
                    sendTime: clock.instant(atNanoseconds: packet.sent.sendTimeNs), size: packet.sent.size,
                    arrival: packet.arrivalTimeNs.map { .nanoseconds($0) },
                    probeClusterID: packet.sent.probeClusterID.map { Int($0) }))
        }
        control.estimator.onFeedback(control.feedback, now: clock.instant(atNanoseconds: nowNs))
        congestion = control
        applyEstimate(nowNs: nowNs)
    }

    /// A round-trip time from a receiver report.
    func estimate(roundTripTime: Duration, nowNs: UInt64) {
        congestion?.estimator.onRoundTripTime(roundTripTime, now: clock.instant(atNanoseconds: nowNs))
        congestion?.roundTripTime = roundTripTime
        applyEstimate(nowNs: nowNs)
    }

    /// A receiver's ceiling (REMB, TMMBR) in kbit/s: the estimate stays under it.
    func estimate(ceilingKbps: Int, nowNs: UInt64) {
        congestion?.estimator.onReceiverEstimatedMaximum(
            ceilingKbps.multipliedReportingOverflow(by: 1_000).partialValue, now: clock.instant(atNanoseconds: nowNs))
        applyEstimate(nowNs: nowNs)
    }

    /// Runs the estimator's timer when due.
    func estimateIfDue(nowNs: UInt64) {
        guard let due = congestion?.estimator.nextDeadline, clock.instant(atNanoseconds: nowNs) >= due else { return }
        congestion?.estimator.process(now: clock.instant(atNanoseconds: nowNs))
        applyEstimate(nowNs: nowNs)
    }

    /// When the estimator's timer is next due, in the connection's nanoseconds.
    var nextEstimateNs: UInt64? {
        congestion.map { clock.nanoseconds(at: $0.estimator.nextDeadline) }
    }

    /// The controller's figures, into the transport-wide statistics.
    func addEstimate(to figures: inout TransportWideCCStatistics) {
        guard let control = congestion else { return }
        figures.estimatedBitrate = control.estimator.targetBitrate
        figures.limitation = "\(control.estimator.limitation)"
        figures.acknowledgedBitrate = control.estimator.acknowledgedBitrate
        figures.queueDelay = control.estimator.queueDelay
        figures.probeClustersUnsent = pacing?.controller.statistics.probeClustersAbandoned ?? 0
    }

    /// Tells the encoder the estimator's target when it moved: any decrease, an increase of 2 % or more (so that a
    /// ramp of ×1.08 a second reconfigures the encoder a few times a second, not at every 25 ms step), or a bound of
    /// the configured range reached.
    private func applyEstimate(nowNs: UInt64) {
        guard congestion != nil, case .connected(var established) = phase else { return }
        // Mutated in place through the stored property: a local copy would copy the estimator's rings on write.
        if let requests = congestion?.estimator.takeProbeClusterRequests(), !requests.isEmpty {
            let now = clock.instant(atNanoseconds: nowNs)
            // A connected connection with a stream has its pacer (started with the congestion controller).
            for request in requests {
                pacing?.controller.addProbeCluster(request, at: now)
                pacing?.metrics.probed()
            }
        }
        guard let estimator = congestion?.estimator else { return }
        // The window: what is in flight (the feedback has not reported it yet) and what waits in the pacer.
        let roundTripTime = congestion?.roundTripTime
        congestion?.pushback.update(
            bytesInFlight: transportWide?.bytesInFlight ?? 0, pacerQueueBytes: pacing?.controller.queuedBytes ?? 0,
            roundTripTime: roundTripTime, targetBitrate: estimator.targetBitrate)
        let pushed = congestion?.pushback.adjust(estimator.targetBitrate) ?? estimator.targetBitrate
        let clamped = min(max(pushed / 1_000, established.range.lowerBound), established.range.upperBound)
        pacing?.metrics.estimated(
            bitrate: estimator.targetBitrate, acknowledged: estimator.acknowledgedBitrate, targetKbps: clamped,
            bytesInFlight: transportWide?.bytesInFlight ?? 0)
        let current = established.targetKbps
        let atBound = clamped == established.range.lowerBound || clamped == established.range.upperBound
        guard clamped < current || (clamped > current && ((clamped - current) * 50 >= current || atBound)) else {
            return
        }
        established.targetKbps = clamped
        phase = .connected(established)
        let reason: BitrateChangeReason = estimator.limitation == .receiverCeiling ? .receiverEstimate : .senderEstimate
        events.append(.targetBitrateChanged(kbps: clamped, reason: reason))
    }
}
