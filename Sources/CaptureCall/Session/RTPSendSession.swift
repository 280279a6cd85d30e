internal import CaptureCore
package import CaptureRTP
package import CaptureVP8
package import CoreMetrics
package import Logging

/// What a peer's RTCP asks of the encoder that feeds an ``RTPSendSession``.
package enum RTPSenderFeedback: Sendable, Hashable {
    /// A key frame, for a PLI or a new FIR (already rate-limited to one per 300 ms, WebRTC's rule).
    case keyFrameRequest(KeyFrameRequestReason)
    /// A new target bit rate, from a REMB or TMMBR ceiling or the loss-based estimate under it (without
    /// ``VideoSenderConfiguration/lossBasedRateControl``, as a WebRTC connection with its own congestion controller
    /// configures it, the receiver's ceiling as it came).
    case targetBitrate(kbps: Int, reason: BitrateChangeReason)
    /// What a transport-wide feedback message newly reported (only when the stream numbers its packets: see
    /// ``RTPSendSession/transportWide``), for a congestion controller.
    case transportFeedback(TransportFeedbackReport)
    /// A round-trip time measured from a receiver report (only with ``RTPSendSession/transportWide``), for a
    /// congestion controller.
    case roundTripTime(Duration)
}

/// The RTP and RTCP logic of one sent video stream, with no I/O, no threads, no locks and no clock of its own: the
/// state a ``VideoSender`` drives over its own sockets and a WebRTC connection drives over its ICE path.
///
/// ## Function
/// - ``send(_:nowNs:output:)`` packetizes an encoded frame for VP8 (RFC 7741), keeps each packet in the
///   retransmission history, protects it with SRTP when configured and hands each datagram to `output`.
/// - ``receiveRTCP(_:length:nowNs:currentTargetKbps:output:)`` takes one (S)RTCP datagram from the peer: receiver
///   reports give the round-trip time and the loss, PLI and new FIRs become key-frame requests, REMB and TMMBR a
///   ceiling on the rate, generic NACKs are answered from the history (RTX, RFC 4588, when configured) through
///   `output`, transport-wide feedback goes to ``transportWide``. What the encoder must do, and the transport-wide
///   reports, come out of ``pollFeedback()``.
/// - With ``transportWide`` (the packetizer configured with a transport-wide sequence number extension id), every
///   packet sent, RTX included, carries the next transport-wide number, written before SRTP protection and recorded
///   once the packet was handed to `output`.
/// - Paced (a WebRTC connection with a pacer): ``packetize(_:nowNs:enqueue:)`` stores each packet and hands it,
///   unprotected and unnumbered, to the owner's pacer; NACKs' retransmissions go the same way; the pacer later hands
///   each back to ``transmit(_:length:kind:probeClusterID:nowNs:output:)``, which numbers it, protects it and sends
///   it, and ``writePadding(into:size:)`` builds its probes' padding.
/// - ``sendReport(nowNs:bye:output:)`` builds a sender report with SDES (and BYE); ``nextReportNs`` says when the
///   next one is due (RFC 3550 §6.3.1: 0.5…1.5 times the interval), ``reportIfDue(nowNs:output:)`` sends it then.
///
/// Time is an input: `nowNs` is the monotonic clock of the frames' capture times (`CLOCK_MONOTONIC` in a real call,
/// any consistent clock in a test), and the NTP time in reports comes from the ``NTPClockMapping`` given at creation.
///
/// ## Threading
/// Not thread-safe and not `Sendable`: one owner calls it, from one thread at a time.
///
/// ## Performance
/// ``send(_:nowNs:output:)`` allocates nothing per packet in steady state: the packetizer lends one reusable buffer
/// with SRTP trailer room, the history is a fixed ring, RTX packets are built in a buffer allocated once, the
/// transport-wide number is written in place and recorded in a fixed ring, and protection happens in place.
package final class RTPSendSession {
    /// The configuration (``VideoSenderConfiguration/remote`` and ``VideoSenderConfiguration/rtcpMux`` are the
    /// owner's business).
    package let configuration: VideoSenderConfiguration
    /// The stream's SSRC.
    package var ssrc: UInt32 { configuration.packetizer.ssrc }
    /// The `a=rid` the stream sends (RFC 8852), or `nil`: the packetizer's checked configuration decides.
    package var rid: String? { packetizer.configuration.ridExtensionID == nil ? nil : packetizer.configuration.rid }

    var packetizer: VP8Packetizer
    /// Sent packets, unprotected, for NACKs (`nil` without retransmission).
    let history: RetransmissionHistory?
    /// The buffer RTX packets are built and protected in (allocated once, with the history).
    let rtxBuffer: UnsafeMutableRawBufferPointer?
    var rtxSequenceNumber = UInt16.random(in: .min ... .max)
    /// The mid and repaired-rid elements (RFC 8285 one-byte form) that RTX copies and padding carry while the peer
    /// has not reported on the RTX SSRC, rendered once; empty when the stream sends neither.
    package let rtxStreamIdentifiers: [UInt8]
    var loss: PacketLossSimulator?
    let srtp: SRTPSession?
    /// Unprotects the peer's SRTCP (libsrtp needs an inbound session for it).
    private let srtcpIn: SRTPSession?
    private var firTracker = FIRSequenceTracker()
    private var schedule: RTCPInterval
    private let clock: NTPClockMapping
    var counters = VideoSenderStatistics()
    var latency = LatencyRecorder()
    /// When the last PLI or FIR was forwarded, for the 300 ms rate limit.
    private var lastKeyFrameRequestNs: UInt64?
    private var lossEstimator = LossBasedBitrateEstimator()
    /// The last REMB or TMMBR, a ceiling over the loss-based estimate.
    private var requestedCeilingKbps: Int?
    private var feedback: [RTPSenderFeedback] = []
    let metrics: VideoSenderMetrics
    private let logger: Logger
    /// Numbers every packet sent with the transport-wide sequence number and reads the peer's transport-wide
    /// feedback; `nil` when the packetizer sends no such extension.
    package let transportWide: TransportWideSender?
    /// The frame whose packets the pacer is sending (paced sending: its packets leave in order), counted for its
    /// metrics at its last packet.
    var pacedFramePackets = 0
    var pacedFrameBytes = 0
    var pacedFrameIsKey = false

    /// Sets up SRTP (our keys for what we send, the peer's for its SRTCP) and the history; the first report is due
    /// half an interval after `nowNs`.
    ///
    /// Its metrics (`camera_rtp_sender_*`) go to `metricsFactory`. When the packetizer sends the transport-wide
    /// sequence number extension, packets are numbered by `transportWide` (the transport's one counter, shared by
    /// every stream on it), or by a sender of the session's own when it is `nil`.
    package init(
        configuration: VideoSenderConfiguration, nowNs: UInt64, clock: NTPClockMapping = NTPClockMapping(),
        logger: Logger = Logger(label: "capture.call.sender"),
        metricsFactory: any MetricsFactory = MetricsSystem.factory, transportWide: TransportWideSender? = nil
    ) throws(VideoSessionError) {
        var configuration = configuration
        if configuration.srtp != nil {
            // libsrtp needs room for its longest trailer (tag and MKI, SRTP_MAX_TRAILER_LEN), not just the tag.
            configuration.packetizer.trailerCapacity = max(
                configuration.packetizer.trailerCapacity, SRTPSession.maximumTrailerLength)
        }
        self.configuration = configuration
        self.logger = logger
        self.clock = clock
        metrics = VideoSenderMetrics(deviceID: configuration.metricsDeviceID, factory: metricsFactory)
        packetizer = VP8Packetizer(configuration: configuration.packetizer)
        self.transportWide = packetizer.configuration.transportSequenceNumberExtensionID.map { id in
            transportWide ?? TransportWideSender(extensionID: id)
        }
        loss = configuration.firstTransmissionLoss.map(PacketLossSimulator.init)
        schedule = RTCPInterval(
            intervalNs: configuration.rtcpInterval.clampedNanoseconds, nowNs: nowNs,
            seed: configuration.packetizer.ssrc)
        feedback.reserveCapacity(8)
        rtxStreamIdentifiers = Self.renderStreamIdentifiers(packetizer.configuration)
        if let retransmission = configuration.retransmission {
            let packetSize = packetizer.configuration.maxPacketSize
            history = RetransmissionHistory(packets: retransmission.historyPackets, slotSize: packetSize)
            // An RTX packet is the original plus the 2-byte original sequence number (and, once the original goes
            // without them, the stream identifiers), plus the SRTP trailer.
            rtxBuffer = .allocate(
                byteCount: packetSize + RTXPacket.overhead
                    + RTXPacket.maximumGrowth(appending: rtxStreamIdentifiers.count)
                    + packetizer.configuration.trailerCapacity,
                alignment: 16)
        } else {
            history = nil
            rtxBuffer = nil
        }
        // Resending the original packet (no RTX) repeats a sequence number, which libsrtp refuses unless told.
        let repeatsPackets = configuration.retransmission.map { $0.rtxPayloadType == nil } ?? false
        do {
            srtp = try configuration.srtp.map { keys throws(SRTPError) in
                try SRTPSession(
                    role: .sender, keyingMaterial: keys, profile: keys.profile, replayProtection: !repeatsPackets)
            }
            srtcpIn = try (configuration.remoteSRTP ?? configuration.srtp).map { keys throws(SRTPError) in
                try SRTPSession(role: .receiver, keyingMaterial: keys, profile: keys.profile)
            }
        } catch {
            rtxBuffer?.deallocate()
            throw VideoSessionError(.srtp, "SRTP setup failed: \(error)")
        }
    }

    deinit {
        rtxBuffer?.deallocate()
    }

    /// The mid element, then the repaired-rid element, as the packetizer (which checked the ids) would write them.
    private static func renderStreamIdentifiers(_ layer: RTPPacketizerConfiguration) -> [UInt8] {
        var elements: [UInt8] = []
        let mid = Array(layer.mid.utf8)
        if let id = layer.midExtensionID { elements += [id << 4 | UInt8(mid.count - 1)] + mid }
        let rid = Array(layer.rid.utf8)
        if let id = layer.repairedRidExtensionID { elements += [id << 4 | UInt8(rid.count - 1)] + rid }
        return elements
    }

    /// Whether the RTX copy of `original` must have the stream identifiers appended: the original went without them
    /// (sent after the peer reported on the media SSRC) and the peer has not reported on the RTX SSRC yet.
    func rtxNeedsStreamIdentifiers(_ original: UnsafeRawBufferPointer) -> Bool {
        guard !counters.rtxSSRCAcknowledged, !packetizer.sendsStreamIdentifiers, !rtxStreamIdentifiers.isEmpty,
            let id = packetizer.configuration.midExtensionID ?? packetizer.configuration.ridExtensionID
        else { return false }
        return RTPHeaderExtensionElement.locate(id: id, in: original) == nil
    }

    /// The figures so far.
    package var statistics: VideoSenderStatistics {
        var statistics = counters
        statistics.glassToWire = latency.summary
        return statistics
    }

    /// When the next sender report is due (`nowNs` clock).
    package var nextReportNs: UInt64 { schedule.nextDueNs }

    /// The next thing the encoder must do for the peer, or `nil`.
    package func pollFeedback() -> RTPSenderFeedback? {
        feedback.isEmpty ? nil : feedback.removeFirst()
    }

    // MARK: Media

    /// Packetizes, stores, protects and hands each packet of `frame` to `output`, which returns whether it went out.
    package func send(_ frame: EncodedFrame, nowNs: UInt64, output: (UnsafeRawBufferPointer) -> Bool) {
        var packets = 0
        var bytes = 0
        var errors = 0
        var dropped = 0
        let srtp = srtp
        let transportWide = transportWide
        let ssrc = ssrc
        forEachPacket(of: frame, nowNs: nowNs) { packet in
            // The transport-wide number goes in now, before SRTP authenticates the header; the size recorded
            // is the RTP packet's (no SRTP tag, no IP/UDP: see TransportWideSender).
            var numbered: TransportWideSender?
            if let transportWide, let offset = packet.transportSequenceNumberOffset {
                transportWide.stamp(packet.buffer, at: offset)
                numbered = transportWide
            }
            let rtpSize = packet.length
            if loss?.shouldDrop() == true {
                // A simulated loss on the way: the packet counts as sent, so feedback reports it lost.
                numbered?.sent(size: rtpSize, ssrc: ssrc, isRetransmission: false, nowNs: nowNs)
                dropped += 1
                return
            }
            if let srtp {
                do throws(SRTPError) {
                    try srtp.protectRTP(packet.buffer, length: &packet.length)
                } catch {
                    errors += 1
                    return
                }
            }
            if output(packet.bytes) {
                numbered?.sent(size: rtpSize, ssrc: ssrc, isRetransmission: false, nowNs: nowNs)
                packets += 1
                bytes += packet.length
            } else {
                errors += 1
            }
        }
        let latencyNs = MonotonicClock.elapsedNs(from: frame.captureTimeNs, to: nowNs)
        metrics.frame(
            packets: packets, bytes: bytes, errors: errors, isKeyFrame: frame.isKeyFrame, latencyNs: latencyNs)
        counters.frames += 1
        counters.packets += packets
        counters.bytes += bytes
        counters.overheadBytes += bytes - min(bytes, frame.bytes.count)
        counters.sendErrors += errors
        counters.firstTransmissionsDropped += dropped
        if frame.isKeyFrame { counters.keyFramesSent += 1 }
        latency.record(nanoseconds: latencyNs)
    }

    /// Packetizes `frame`, stores each packet in the retransmission history, then hands it to `body` (in the
    /// packetizer's reused buffer, unprotected and unnumbered).
    func forEachPacket(of frame: EncodedFrame, nowNs: UInt64, _ body: (inout OutgoingRTPPacket) -> Void) {
        let history = history
        frame.bytes.withUnsafeBytes { payload in
            packetizer.packetize(
                payload, rtpTimestamp: frame.rtpTimestamp, isKeyFrame: frame.isKeyFrame,
                isDroppable: frame.isDroppable, rotation: frame.rotation,
                temporalLayerIndex: frame.temporalLayer.map { UInt8(clamping: $0.index) },
                isLayerSync: frame.temporalLayer?.isLayerSync ?? false
            ) { (packet: inout OutgoingRTPPacket) in
                history?.store(packet.bytes, sequenceNumber: packet.sequenceNumber, nowNs: nowNs)
                body(&packet)
            }
        }
    }

    // MARK: Reports

    /// Sends a sender report when one is due at `nowNs` (and schedules the next).
    package func reportIfDue(nowNs: UInt64, output: (UnsafeRawBufferPointer) -> Bool) {
        if schedule.isDue(nowNs: nowNs) { sendReport(nowNs: nowNs, bye: false, output: output) }
    }

    /// Sends a compound RTCP packet: a sender report (NTP↔RTP mapping, packet and octet counts) and SDES with the
    /// CNAME, and a BYE when `bye` is set. Protected with SRTCP when SRTP is on.
    package func sendReport(nowNs: UInt64, bye: Bool, output: (UnsafeRawBufferPointer) -> Bool) {
        let ntp = clock.ntp(atMonotonicNanoseconds: nowNs)
        // Frames carry their capture time on the 90 kHz clock, so the RTP time of "now" follows from the same clock.
        let rtpTimestamp = EncodedFrame.rtpTimestamp(fromNanoseconds: nowNs)
        var packets: [RTCPPacket] = [
            .senderReport(
                RTCPSenderReport(
                    ssrc: ssrc, ntpTimestamp: ntp, rtpTimestamp: rtpTimestamp,
                    packetCount: UInt32(truncatingIfNeeded: counters.packets),
                    octetCount: UInt32(truncatingIfNeeded: counters.bytes - counters.overheadBytes))),
            .sourceDescription([RTCPSourceDescriptionChunk(ssrc: ssrc, items: [.cname(configuration.cname)])]),
        ]
        if bye { packets.append(.goodbye(RTCPBye(ssrcs: [ssrc]))) }
        if sendRTCP(packets, output: output) { counters.rtcpSent += 1 } else { counters.sendErrors += 1 }
    }

    /// Serializes `packets` as one compound packet, protects it as SRTCP when SRTP is on, and hands it to `output`.
    /// Whether it went out.
    package func sendRTCP(_ packets: [RTCPPacket], output: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        CaptureCall.sendRTCP(packets, protectingWith: srtp, send: output)
    }

    // MARK: The peer's RTCP

    /// Takes one RTCP datagram from the peer (SRTCP when SRTP is on: it is unprotected in place in `buffer`), parses
    /// it and acts on it: retransmissions go to `output` at once (protected), or, with `pacesRetransmissions`, to
    /// `retransmit` unprotected and unnumbered, for the owner's pacer to send later with
    /// ``transmit(_:length:kind:probeClusterID:nowNs:output:)``; requests for the encoder go to ``pollFeedback()``.
    /// Malformed or unauthentic RTCP is counted and ignored. `currentTargetKbps` is the encoder's rate now, which
    /// the loss-based estimate moves from (`nil` when no encoder is attached).
    package func receiveRTCP(
        _ buffer: UnsafeMutableRawBufferPointer, length: Int, nowNs: UInt64, currentTargetKbps: Int?,
        output: (UnsafeRawBufferPointer) -> Bool, pacesRetransmissions: Bool = false,
        retransmit paced: (UnsafeRawBufferPointer) -> Bool = { _ in false }
    ) {
        guard let packets = unprotectAndParseRTCP(buffer, length: length) else { return }
        handleRTCP(
            packets, nowNs: nowNs, currentTargetKbps: currentTargetKbps, output: output,
            pacesRetransmissions: pacesRetransmissions, retransmit: paced)
    }

    /// Unprotects one RTCP datagram from the peer in place (SRTCP when SRTP is on) and parses it; `nil` (counted) when
    /// it is unauthentic or malformed. For an owner with several streams on one transport (simulcast): one stream
    /// unprotects, then every stream takes the packets with ``handleRTCP(_:nowNs:currentTargetKbps:output:pacesRetransmissions:retransmit:sharedFeedback:)``.
    package func unprotectAndParseRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) -> [RTCPPacket]? {
        var length = min(length, buffer.count)
        if let srtcpIn {
            do throws(SRTPError) {
                try srtcpIn.unprotectRTCP(buffer, length: &length)
            } catch {
                counters.srtcpFailures += 1
                metrics.received(.malformed)
                return nil
            }
        }
        do throws(RTCPParseError) {
            return try RTCPCompoundPacket.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<length]))
        } catch {
            counters.rtcpMalformed += 1
            metrics.received(.malformed)
            logger.debug("malformed RTCP ignored", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// Acts on the peer's parsed RTCP as ``receiveRTCP(_:length:nowNs:currentTargetKbps:output:pacesRetransmissions:retransmit:)``
    /// does: what names this stream's SSRC (report blocks, PLI, FIR, NACK, TMMBR) is taken by it; what concerns the
    /// whole transport (transport-wide feedback, REMB) only by the stream given `sharedFeedback`.
    ///
    /// - Parameter sharedFeedback: the SSRCs of every stream on the transport, for the one stream that acts for all
    ///   of them: it takes the transport-wide feedback, and a REMB that names no SSRC, its own or any of these (the
    ///   default, empty: a single stream's own). `nil` for the other streams, which ignore both, so that one message
    ///   is acted on once.
    package func handleRTCP(
        _ packets: [RTCPPacket], nowNs: UInt64, currentTargetKbps: Int?, output: (UnsafeRawBufferPointer) -> Bool,
        pacesRetransmissions: Bool = false, retransmit paced: (UnsafeRawBufferPointer) -> Bool = { _ in false },
        sharedFeedback: Set<UInt32>? = []
    ) {
        let arrival = clock.ntp(atMonotonicNanoseconds: nowNs)
        for packet in packets {
            handle(
                packet, arrival: arrival, nowNs: nowNs, currentTargetKbps: currentTargetKbps, output: output,
                pacesRetransmissions: pacesRetransmissions, paced: paced, sharedFeedback: sharedFeedback)
        }
    }

    private func handle(
        _ packet: RTCPPacket, arrival: NTPTimestamp, nowNs: UInt64, currentTargetKbps: Int?,
        output: (UnsafeRawBufferPointer) -> Bool, pacesRetransmissions: Bool,
        paced: (UnsafeRawBufferPointer) -> Bool, sharedFeedback: Set<UInt32>?
    ) {
        switch packet {
        case .receiverReport(let report):
            handleReportBlocks(
                report.reportBlocks, arrival: arrival, nowNs: nowNs, currentTargetKbps: currentTargetKbps)
        case .senderReport(let report):
            handleReportBlocks(
                report.reportBlocks, arrival: arrival, nowNs: nowNs, currentTargetKbps: currentTargetKbps)
        case .pictureLossIndication(_, let mediaSSRC) where mediaSSRC == ssrc || mediaSSRC == 0:
            counters.plisReceived += 1
            metrics.received(.pli)
            if admitKeyFrameRequest(arrivalNs: nowNs) { feedback.append(.keyFrameRequest(.pictureLossIndication)) }
        case .fullIntraRequest(_, let entries) where entries.contains(where: { $0.ssrc == ssrc }):
            // Counted by the stream it names only (one FIR on a transport of several streams is one stream's).
            let isNew = firTracker.containsNewRequest(in: entries, for: ssrc)
            counters.firsReceived += 1
            metrics.received(.fir)
            if isNew, admitKeyFrameRequest(arrivalNs: nowNs) { feedback.append(.keyFrameRequest(.fullIntraRequest)) }
        case .receiverEstimatedMaximumBitrate(let remb) where concernsUs(remb, sharedFeedback: sharedFeedback):
            let kbps = Int(clamping: remb.bitrate / 1_000)
            counters.rembsReceived += 1
            counters.lastRequestedBitrateKbps = kbps
            metrics.received(.bitrateRequest(kbps: kbps))
            applyCeiling(kbps, reason: .receiverEstimate)
        case .temporaryMaximumBitrateRequest(_, let entries):
            guard let entry = entries.first(where: { $0.ssrc == ssrc }) else { return }
            let kbps = Int(clamping: entry.bitrate / 1_000)
            counters.tmmbrsReceived += 1
            counters.lastRequestedBitrateKbps = kbps
            metrics.received(.bitrateRequest(kbps: kbps))
            applyCeiling(kbps, reason: .temporaryMaximum)
        case .genericNACK(_, let mediaSSRC, let entries) where mediaSSRC == ssrc:
            metrics.received(.nack)
            retransmit(
                entries, nowNs: nowNs, output: output, pacesRetransmissions: pacesRetransmissions, paced: paced)
        case .transportFeedback(let message):
            // The whole transport's feedback, whatever media SSRC it names.
            guard let transportWide, sharedFeedback != nil else { return }
            feedback.append(.transportFeedback(transportWide.process(message, nowNs: nowNs)))
        default:
            break
        }
    }

    /// Whether the stream acts on `remb`: only the stream that takes the shared feedback, when the REMB names no SSRC,
    /// its own or one of the transport's.
    private func concernsUs(_ remb: RTCPREMB, sharedFeedback: Set<UInt32>?) -> Bool {
        guard let shared = sharedFeedback else { return false }
        return remb.ssrcs.isEmpty || remb.ssrcs.contains(ssrc) || remb.ssrcs.contains { shared.contains($0) }
    }

    /// WebRTC's rule (`EncoderRtcpFeedback`): a key-frame request within 300 ms of the last one forwarded is
    /// answered by the key frame already on its way, not by another; so a burst of PLIs (every viewer joining a
    /// conference at once, a receiver repeating itself) costs one key frame. Counts the request either way.
    private func admitKeyFrameRequest(arrivalNs: UInt64) -> Bool {
        if let last = lastKeyFrameRequestNs, arrivalNs &- last < 300_000_000 {
            counters.keyFrameRequestsThrottled += 1
            return false
        }
        lastKeyFrameRequestNs = arrivalNs
        counters.keyFramesRequested += 1
        return true
    }

    /// libwebrtc's rule (`RTPSender::OnReceivedAckOnSsrc`): a report block naming an SSRC shows the peer has bound
    /// it, so the mid and rid (RFC 8843, RFC 8852) are no longer needed on it: the media SSRC's packets go without
    /// them from the next frame on; the RTX SSRC's copies and padding once it is named in turn.
    private func acknowledge(_ blocks: [RTCPReportBlock]) {
        for block in blocks {
            if block.ssrc == ssrc, !counters.ssrcAcknowledged {
                counters.ssrcAcknowledged = true
                // While the RTX SSRC is unknown to the peer, its copies get the identifiers back: keep their room.
                let rtxUnknown = configuration.retransmission?.rtxPayloadType != nil && !counters.rtxSSRCAcknowledged
                packetizer.stopSendingStreamIdentifiers(reservingRoom: rtxUnknown ? rtxStreamIdentifiers.count : 0)
                logger.debug("SSRC acknowledged: mid and rid no longer sent", metadata: ["ssrc": "\(ssrc)"])
            } else if let rtx = configuration.retransmission, rtx.rtxPayloadType != nil, block.ssrc == rtx.rtxSSRC,
                !counters.rtxSSRCAcknowledged
            {
                counters.rtxSSRCAcknowledged = true
                packetizer.releaseReservedRoom()
                logger.debug(
                    "RTX SSRC acknowledged: mid and repaired rid no longer sent", metadata: ["ssrc": "\(rtx.rtxSSRC)"])
            }
        }
    }

    private func handleReportBlocks(
        _ blocks: [RTCPReportBlock], arrival: NTPTimestamp, nowNs: UInt64, currentTargetKbps: Int?
    ) {
        acknowledge(blocks)
        for block in blocks where block.ssrc == ssrc {
            let rtt = RoundTripTime.compute(reportBlock: block, receivedAt: arrival)
            counters.receiverReports += 1
            counters.remoteFractionLost = Double(block.fractionLost) / 256
            counters.remotePacketsLost = Int(block.cumulativeLost)
            // RTP timestamp units of the 90 kHz video clock: 1 unit = 100_000 / 9 ns.
            counters.remoteJitter = .nanoseconds(Int64(block.jitter) * 100_000 / 9)
            var rttNs: Int64?
            if let rtt {
                let (seconds, attoseconds) = rtt.components
                counters.roundTripTime = rtt
                counters.totalRoundTripTime += rtt
                counters.roundTripTimeMeasurements += 1
                rttNs = seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000
            }
            metrics.received(.report(fractionLost: Double(block.fractionLost) / 256, roundTripNs: rttNs))
            if transportWide != nil, let rtt { feedback.append(.roundTripTime(rtt)) }
            if configuration.lossBasedRateControl, let currentTargetKbps {
                applyLoss(Double(block.fractionLost) / 256, currentKbps: currentTargetKbps, nowNs: nowNs)
            }
        }
    }

    /// A REMB or TMMBR: the rate becomes it, or the loss-based estimate when that is lower.
    private func applyCeiling(_ kbps: Int, reason: BitrateChangeReason) {
        requestedCeilingKbps = kbps
        var target = kbps
        if configuration.lossBasedRateControl, let estimate = lossEstimator.estimateKbps {
            target = min(kbps, estimate)
        }
        feedback.append(.targetBitrate(kbps: target, reason: reason))
    }

    /// A receiver report's loss: the loss-based estimate moves, and the rate follows it under the ceiling.
    private func applyLoss(_ fractionLost: Double, currentKbps: Int, nowNs: UInt64) {
        guard let estimate = lossEstimator.update(fractionLost: fractionLost, currentKbps: currentKbps, nowNs: nowNs)
        else { return }
        counters.lossBasedEstimateKbps = estimate
        let target = requestedCeilingKbps.map { min($0, estimate) } ?? estimate
        if target != currentKbps { feedback.append(.targetBitrate(kbps: target, reason: .senderEstimate)) }
    }

    // MARK: Retransmission

    /// Answers one generic NACK: each requested packet still in the history is sent again, wrapped in RTX (RFC 4588
    /// §4: the RTX payload type, SSRC and sequence number, then the original sequence number before the original
    /// payload) when an RTX payload type is configured, else as it was. Requests older than the history or the
    /// maximum age, or for packets never sent, are counted and not served. Each retransmission is a new packet on the
    /// transport: its copy gets the next transport-wide number (written before protection). Allocates nothing.
    private func retransmit(
        _ entries: [RTCPNACKEntry], nowNs: UInt64, output: (UnsafeRawBufferPointer) -> Bool,
        pacesRetransmissions: Bool, paced: (UnsafeRawBufferPointer) -> Bool
    ) {
        var requested = 0
        var sent = 0
        var sentBytes = 0
        var errors = 0
        defer {
            metrics.retransmitted(sent)
            counters.nacksReceived += 1
            counters.packetsRequested += requested
            counters.retransmissions += sent
            counters.retransmittedBytes += sentBytes
            counters.sendErrors += errors
        }
        guard let history, let rtxBuffer, let retransmission = configuration.retransmission else {
            requested = entries.reduce(0) { $0 + 1 + $1.lostBitmask.nonzeroBitCount }
            return
        }
        for entry in entries {
            for bit in -1..<16 where bit < 0 || entry.lostBitmask & (1 << bit) != 0 {
                requested += 1
                let sequenceNumber = entry.packetID &+ UInt16(bit + 1)
                switch history.packet(
                    sequenceNumber: sequenceNumber, nowNs: nowNs,
                    maximumAgeNs: retransmission.maximumAge.clampedNanoseconds)
                {
                case .tooOld: counters.retransmissionsTooOld += 1
                case .unknown: counters.retransmissionsUnknown += 1
                case .found(let original):
                    let appends = rtxNeedsStreamIdentifiers(original)
                    var length = rtxStreamIdentifiers.withUnsafeBytes { identifiers in
                        Self.buildRetransmission(
                            of: original, into: rtxBuffer, retransmission: retransmission,
                            ridExtensionID: packetizer.configuration.ridExtensionID,
                            repairedRidExtensionID: packetizer.configuration.repairedRidExtensionID,
                            appending: appends
                                ? identifiers : UnsafeRawBufferPointer(rebasing: identifiers[0..<0]),
                            sequenceNumber: &rtxSequenceNumber)
                    }
                    guard length > 0 else {
                        errors += 1
                        continue
                    }
                    if pacesRetransmissions {
                        // Paced: the copy waits in the pacer, unnumbered and unprotected, and is counted as it
                        // leaves (transmit(_:length:kind:probeClusterID:nowNs:output:)).
                        if !paced(UnsafeRawBufferPointer(rebasing: rtxBuffer[0..<length])) { errors += 1 }
                        continue
                    }
                    let numbered = transportWide?.stamp(packet: rtxBuffer, length: length) == true
                    let rtpSize = length
                    if let srtp {
                        do throws(SRTPError) {
                            try srtp.protectRTP(rtxBuffer, length: &length)
                        } catch {
                            errors += 1
                            continue
                        }
                    }
                    if output(UnsafeRawBufferPointer(rebasing: rtxBuffer[0..<length])) {
                        if numbered {
                            transportWide?.sent(
                                size: rtpSize,
                                ssrc: retransmission.rtxPayloadType == nil ? ssrc : retransmission.rtxSSRC,
                                isRetransmission: true, nowNs: nowNs)
                        }
                        sent += 1
                        sentBytes += length
                    } else {
                        errors += 1
                    }
                }
            }
        }
    }

    /// Writes the retransmission of `original` (an unprotected RTP packet) into `buffer`; returns its length.
    ///
    /// An RTX copy has its `rtp-stream-id` element turned into `repaired-rtp-stream-id` (RFC 8852 §3.2), or blanked
    /// when that was not negotiated (``RTXPacket``); pass the packetizer's checked ids (`nil` where it sends no such
    /// element). `elements` are appended to the copy's extension block (``RTXPacket``): the stream identifiers of an
    /// original sent without them. A resend on the media SSRC stays as it was.
    static func buildRetransmission(
        of original: UnsafeRawBufferPointer, into buffer: UnsafeMutableRawBufferPointer,
        retransmission: RetransmissionConfiguration, ridExtensionID: UInt8? = nil,
        repairedRidExtensionID: UInt8? = nil,
        appending elements: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0),
        sequenceNumber: inout UInt16
    ) -> Int {
        guard let rtxPayloadType = retransmission.rtxPayloadType else {
            UnsafeMutableRawBufferPointer(rebasing: buffer[0..<original.count]).copyMemory(from: original)
            return original.count
        }
        defer { sequenceNumber &+= 1 }
        return RTXPacket.write(
            wrapping: original, into: buffer, payloadType: rtxPayloadType, ssrc: retransmission.rtxSSRC,
            sequenceNumber: sequenceNumber, ridExtensionID: ridExtensionID,
            repairedRidExtensionID: repairedRidExtensionID, appending: elements)
    }
}
