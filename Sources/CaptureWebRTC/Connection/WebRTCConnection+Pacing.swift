internal import CaptureCall
internal import CaptureCongestion
internal import CaptureRTP

/// The connection's pacer and what it holds: the packets of each frame and each retransmission wait here, unprotected
/// and unnumbered, and leave in short bursts at the pacing rate; probe clusters leave at their own rate, padded on the
/// RTX stream when there is no media to send; with a padding target (``WebRTCConnection/setPaddingTarget(kbps:)``),
/// padding on the RTX stream fills what is sent up to it, at most the target, while the window has room.
///
/// ## Why here
/// The transport-wide number and the send time recorded for the estimator are the instant a packet leaves the pacer,
/// not the instant the encoder produced it: so a packet is numbered and protected as it leaves
/// (`RTPSendSession.transmit`), and the estimator sees the real spacing of what went on the wire.
///
/// ## Rates
/// With transport-wide congestion control, the estimator's pacing rate (1.1 × its target once feedback arrived,
/// 2.5 × before). With receiver-report rate control, 2.5 × the target: there is no estimate of the path to pace close
/// to, so the pacer only smooths a frame's burst.
///
/// ## The encoder told to drop frames
/// While the congestion window is full (bytes in flight over (RTT + 350 ms) × target, libwebrtc's pushback) or the
/// queue holds more than 2 s at the pacing rate (until it is back under 1 s), ``ConnectionEvent/frameDroppingChanged(_:)`` tells the owner
/// to drop frames before the encoder; the window also pushes the encoder's target down by 5–10 % a step while full.
struct Pacing {
    var controller: PacingController
    let store: PacedPacketStore
    let metrics: CongestionMetrics
    /// Whether the owner was last told to drop frames.
    var droppingFrames = false
    var droppingEpisodes = 0
    /// Padding the pacer asked for that could not be built (no RTX stream).
    var paddingUnavailable = 0
    /// How long the oldest queued packet had waited at the last drain.
    var queueDelay = Duration.zero
    /// Keeps NACKs' retransmissions within the target rate.
    var retransmissions: RetransmissionRateLimiter

    /// The most a queue may hold, at the pacing rate, before the encoder is told to drop frames: the pacer's own
    /// queue-time limit (2 s, libwebrtc's `kMaxExpectedQueueLength`), since at the lowest rates one key frame alone
    /// is a second of data and the frames after it must not be dropped for it. It resumes once the queue holds less
    /// than ``frameResumeQueueTime`` (and the window has room): without the gap, dropping flaps on and off at the
    /// bound, and every few frames let through make one more freeze at the viewer.
    static let frameDropQueueTime = Duration.seconds(2)
    static let frameResumeQueueTime = Duration.seconds(1)
}

extension WebRTCConnection {
    // MARK: Pacing

    /// Sets up the pacer for `media` (once connected), its retransmission budget full at `startKbps`.
    func startPacing(for media: RTPSendSession, startKbps: Int, nowNs: UInt64) {
        let packetizer = media.configuration.packetizer
        // An RTX copy is the original plus its original sequence number (and the stream identifiers an original sent
        // without them gets back while the RTX SSRC is unknown to the peer); then the SRTP trailer.
        let slot =
            packetizer.maxPacketSize + RTXPacket.overhead
            + RTXPacket.maximumGrowth(appending: media.rtxStreamIdentifiers.count) + max(packetizer.trailerCapacity, 64)
        let padding =
            RTPPaddingPacket.headerLength(transportWideID: media.transportWide?.extensionID)
            + RTPPaddingPacket.maximumPaddingLength
        pacing = Pacing(
            controller: PacingController(
                configuration: PacingController.Configuration(paddingPacketSize: padding),
                at: clock.instant(atNanoseconds: nowNs)),
            store: PacedPacketStore(slotSize: slot),
            metrics: CongestionMetrics(deviceID: media.configuration.metricsDeviceID),
            // Full from the start: a bucket that started empty refused the first NACKs after a quiet spell (it only
            // fills while the rate is known, and the rate is set as a NACK arrives).
            retransmissions: RetransmissionRateLimiter(
                maximumBitrate: startKbps.multipliedReportingOverflow(by: 1_000).partialValue,
                at: clock.instant(atNanoseconds: nowNs)))
    }

    /// Queues one unprotected packet of stream `stream` (simulcast layer) for the pacer; `false` when the store is
    /// full.
    func enqueuePaced(_ packet: UnsafeRawBufferPointer, kind: PacedPacketKind, stream: Int, nowNs: UInt64) -> Bool {
        if kind == .retransmission, case .connected(let established) = phase {
            // Over the target rate's worth a second, a NACK is not answered (counted; the receiver asks again, or
            // for a key frame).
            let now = clock.instant(atNanoseconds: nowNs)
            pacing?.retransmissions.setMaximumBitrate(
                established.targetKbps.multipliedReportingOverflow(by: 1_000).partialValue, at: now)
            if pacing?.retransmissions.tryUse(packet.count, at: now) == false { return true }
        }
        guard let store = pacing?.store, let handle = store.store(packet, kind: kind, stream: stream) else {
            return false
        }
        pacing?.controller.enqueue(
            handle: handle, size: packet.count, priority: kind == .retransmission ? .retransmission : .media,
            at: clock.instant(atNanoseconds: nowNs))
        return true
    }

    /// Sends what the pacer lets go at `nowNs`.
    func drainPacer(nowNs: UInt64) {
        guard pacing != nil, case .connected(let established) = phase, let media = established.media else { return }
        let streams = established.streams
        let now = clock.instant(atNanoseconds: nowNs)
        pacing?.controller.setPacingRate(pacingRate(targetKbps: established.targetKbps), at: now)
        // Read before the pacer's exclusive access begins (the rate reads the pacer's state).
        let padding = paddingRate(targetKbps: established.targetKbps, media: media)
        pacing?.controller.setPaddingRate(padding, at: now)
        let route = mediaPath
        while let output = pacing?.controller.poll(at: now), let store = pacing?.store {
            switch output {
            case .packet(let handle, let cluster):
                if let (buffer, length, kind, stream) = store.packet(handle), streams.indices.contains(stream) {
                    streams[stream].transmit(
                        buffer, length: length, kind: kind, probeClusterID: cluster, nowNs: nowNs
                    ) { sendMedia($0, route: route) }
                }
                store.release(handle)
            case .padding(let size, let cluster):
                let length = media.writePadding(into: store.scratch, size: size)
                guard length > 0 else {
                    pacing?.paddingUnavailable += 1
                    continue
                }
                if media.transmit(
                    store.scratch, length: length, kind: .padding, probeClusterID: cluster, nowNs: nowNs,
                    output: { sendMedia($0, route: route) })
                {
                    pacing?.metrics.padded(length)
                }
            }
        }
        let queueDelay = pacing?.controller.oldestQueueTime(at: now) ?? .zero
        pacing?.queueDelay = queueDelay
        updateFrameDropping(nowNs: nowNs)
        if let pacing {
            pacing.metrics.paced(
                rate: pacing.controller.effectiveRate, queueDelay: queueDelay,
                queuedBytes: pacing.controller.queuedBytes, dropping: pacing.droppingFrames)
        }
    }

    /// The rate the pacer drains at, bits per second (see ``Pacing``).
    func pacingRate(targetKbps: Int) -> Int {
        if let estimator = congestion?.estimator { return estimator.pacingBitrate }
        return targetKbps.multipliedReportingOverflow(by: 2_500).partialValue
    }

    /// The rate padding fills up to, bits per second: the owner's padding target, at most the target; none without an
    /// estimator or an RTX stream to pad on (padding the pacer counted but nobody sent would hold media back), when
    /// the target is over the connection's bit-rate range, while the congestion window is full or frames are being
    /// dropped (libwebrtc pads nothing while congested), and while loss limits the estimate (padding into a path that
    /// loses packets only adds to the loss: in the Janus lab it held a full drop-tail queue at 25 % loss).
    func paddingRate(targetKbps: Int, media: RTPSendSession) -> Int {
        // A padding target over the range's top could never be reached: padding for it would be waste for good.
        guard paddingTargetKbps > 0, let control = congestion, !control.pushback.isDroppingFrames,
            control.estimator.limitation != .lossBased, pacing?.droppingFrames != true,
            media.configuration.retransmission?.rtxPayloadType != nil,
            case .connected(let established) = phase, paddingTargetKbps <= established.range.upperBound
        else { return 0 }
        return min(paddingTargetKbps, targetKbps).multipliedReportingOverflow(by: 1_000).partialValue
    }

    /// Tells the owner to start or stop dropping frames when the window's or the queue's state changed.
    func updateFrameDropping(nowNs: UInt64) {
        guard let pacer = pacing?.controller else { return }
        let windowFull = congestion?.pushback.isDroppingFrames ?? false
        let rate = max(1, pacer.pacingRate)
        let queued = Duration.nanoseconds(
            Int64(clamping: pacer.queuedBytes).multipliedReportingOverflow(by: 8_000_000_000).partialValue
                / Int64(rate))
        let wasDropping = pacing?.droppingFrames ?? false
        let dropping =
            windowFull || queued > Pacing.frameDropQueueTime || (wasDropping && queued > Pacing.frameResumeQueueTime)
        guard dropping != pacing?.droppingFrames else { return }
        pacing?.droppingFrames = dropping
        if dropping { pacing?.droppingEpisodes += 1 }
        events.append(.frameDroppingChanged(dropping))
    }

    /// When the pacer next wants to send, in the connection's nanoseconds.
    var nextPacerNs: UInt64? {
        pacing?.controller.nextDeadline.map { clock.nanoseconds(at: $0) }
    }

    /// Empties the pacer (the connection is over).
    func stopPacing() {
        pacing?.controller.removeAll()
        pacing?.store.removeAll()
    }

    /// The pacer's figures, with the congestion window's.
    var pacerStatistics: PacerStatistics? {
        guard let pacing else { return nil }
        let pacer = pacing.controller
        var figures = PacerStatistics()
        figures.pacingRate = pacer.pacingRate
        figures.effectiveRate = pacer.effectiveRate
        figures.queuedPackets = pacer.queuedPackets
        figures.queuedBytes = pacer.queuedBytes
        figures.queueDelay = pacing.queueDelay
        figures.expectedQueueTime = pacer.expectedQueueTime
        let sent = pacer.statistics
        figures.packetsSent = sent.packetsSent
        figures.totalQueueDelay = sent.totalQueueDelay
        figures.paddingPacketsSent = sent.paddingPacketsSent
        figures.paddingBytesSent = sent.paddingBytesSent
        figures.probeClustersStarted = sent.probeClustersStarted
        figures.probeClustersCompleted = sent.probeClustersCompleted
        figures.probeClustersAbandoned = sent.probeClustersAbandoned
        figures.queueTimeLimitRaises = sent.queueTimeLimitRaises
        if let pushback = congestion?.pushback {
            figures.congestionWindow = pushback.window
            figures.pushbackRatio = pushback.encodingRateRatio
        }
        figures.isDroppingFrames = pacing.droppingFrames
        figures.retransmissionsRateLimited = pacing.retransmissions.refused
        figures.frameDroppingEpisodes = pacing.droppingEpisodes
        return figures
    }
}
