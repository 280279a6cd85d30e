internal import CaptureCore
internal import CaptureNet
internal import CaptureRTP
internal import CaptureVP8
internal import Foundation
internal import Logging

extension VideoSender {
    /// The RTCP thread: reads the peer's RTCP from the sender's own socket (with a short timeout, so it also serves as
    /// the report timer; with a transport, which delivers the RTCP itself, it only waits) and sends a sender report
    /// when one is due. Holds the sender weakly between packets, so that dropping it ends the loop.
    static func rtcpLoop(_ weakSender: WeakSender) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
        defer { buffer.deallocate() }
        guard let first = weakSender.sender else { return }
        var schedule = RTCPInterval(intervalNs: first.configuration.rtcpIntervalNs, nowNs: MonotonicClock.nowNs())
        let socket: UDPSocket? =
            if case .sockets(_, let rtcp, _, _) = first.output { rtcp } else { nil }
        let stopped = first.rtcpStopped
        defer { stopped.withLock { $0 = true } }
        while let sender = weakSender.sender, sender.running.withLock({ $0 }) {
            if let socket {
                let received: (count: Int, source: SocketAddress)?
                do throws(UDPSocketError) {
                    received = try socket.receive(into: buffer, timeout: .milliseconds(50))
                } catch {
                    break  // Closed: the sender finished.
                }
                if let received { sender.receiveRTCP(buffer, length: received.count) }
            } else {
                usleep(20_000)
            }
            if schedule.isDue(nowNs: MonotonicClock.nowNs()) { sender.sendReport(bye: false) }
        }
    }

    /// Takes one RTCP datagram from the peer (SRTCP when SRTP is on: it is unprotected in place in `buffer`), parses
    /// it and acts on it. A ``PacketTransport``'s owner calls it for the RTCP it receives; a sender with its own
    /// sockets reads them itself. Any thread.
    public func receiveRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) {
        var length = length
        if let srtcpIn {
            do throws(SRTPError) {
                try srtcpIn.unprotectRTCP(buffer, length: &length)
            } catch {
                state.withLock { $0.statistics.srtcpFailures += 1 }
                metrics.received(.malformed)
                return
            }
        }
        let packets: [RTCPPacket]
        do throws(RTCPParseError) {
            packets = try RTCPCompoundPacket.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<length]))
        } catch {
            state.withLock { $0.statistics.rtcpMalformed += 1 }
            metrics.received(.malformed)
            logger.debug("malformed RTCP ignored", metadata: ["error": "\(error)"])
            return
        }
        let arrival = NTPTimestamp.now()
        for packet in packets { handle(packet, arrival: arrival) }
    }

    private func handle(_ packet: RTCPPacket, arrival: NTPTimestamp) {
        switch packet {
        case .receiverReport(let report):
            handleReportBlocks(report.reportBlocks, arrival: arrival)
        case .senderReport(let report):
            handleReportBlocks(report.reportBlocks, arrival: arrival)
        case .pictureLossIndication(_, let mediaSSRC) where mediaSSRC == ssrc || mediaSSRC == 0:
            let forward = state.withLock {
                $0.statistics.plisReceived += 1
                return Self.admitKeyFrameRequest(&$0, arrivalNs: MonotonicClock.nowNs())
            }
            metrics.received(.pli)
            if forward { pipeline.withLock { $0.pipeline }?.requestKeyFrame(reason: .pictureLossIndication) }
        case .fullIntraRequest(_, let entries):
            let isNew = firTracker.withLock { $0.containsNewRequest(in: entries, for: ssrc) }
            let forward = state.withLock {
                $0.statistics.firsReceived += 1
                return isNew && Self.admitKeyFrameRequest(&$0, arrivalNs: MonotonicClock.nowNs())
            }
            metrics.received(.fir)
            if forward { pipeline.withLock { $0.pipeline }?.requestKeyFrame(reason: .fullIntraRequest) }
        case .receiverEstimatedMaximumBitrate(let remb) where remb.ssrcs.isEmpty || remb.ssrcs.contains(ssrc):
            let kbps = Int(clamping: remb.bitrate / 1_000)
            state.withLock {
                $0.statistics.rembsReceived += 1
                $0.statistics.lastRequestedBitrateKbps = kbps
            }
            metrics.received(.bitrateRequest(kbps: kbps))
            applyCeiling(kbps, reason: .receiverEstimate)
        case .temporaryMaximumBitrateRequest(_, let entries):
            guard let entry = entries.first(where: { $0.ssrc == ssrc }) else { return }
            let kbps = Int(clamping: entry.bitrate / 1_000)
            state.withLock {
                $0.statistics.tmmbrsReceived += 1
                $0.statistics.lastRequestedBitrateKbps = kbps
            }
            metrics.received(.bitrateRequest(kbps: kbps))
            applyCeiling(kbps, reason: .temporaryMaximum)
        case .genericNACK(_, let mediaSSRC, let entries) where mediaSSRC == ssrc:
            metrics.received(.nack)
            retransmit(entries)
        default:
            break
        }
    }

    /// WebRTC's rule (`EncoderRtcpFeedback`): a key-frame request within 300 ms of the last one forwarded is
    /// answered by the key frame already on its way, not by another; so a burst of PLIs (every viewer joining a
    /// conference at once, a receiver repeating itself) costs one key frame. Counts the request either way.
    static func admitKeyFrameRequest(_ state: inout SendState, arrivalNs: UInt64) -> Bool {
        if let last = state.lastKeyFrameRequestNs, arrivalNs &- last < 300_000_000 {
            state.statistics.keyFrameRequestsThrottled += 1
            return false
        }
        state.lastKeyFrameRequestNs = arrivalNs
        state.statistics.keyFramesRequested += 1
        return true
    }

    private func handleReportBlocks(_ blocks: [RTCPReportBlock], arrival: NTPTimestamp) {
        for block in blocks where block.ssrc == ssrc {
            let rtt = RoundTripTime.compute(reportBlock: block, receivedAt: arrival)
            state.withLock {
                $0.statistics.receiverReports += 1
                $0.statistics.remoteFractionLost = Double(block.fractionLost) / 256
                if let rtt {
                    let (seconds, attoseconds) = rtt.components
                    $0.statistics.roundTripTimeMs = Double(seconds) * 1_000 + Double(attoseconds) / 1e15
                }
            }
            let rttNs = rtt.map { rtt -> Int64 in
                let (seconds, attoseconds) = rtt.components
                return seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000
            }
            metrics.received(.report(fractionLost: Double(block.fractionLost) / 256, roundTripNs: rttNs))
            if configuration.lossBasedRateControl { applyLoss(Double(block.fractionLost) / 256) }
        }
    }

    /// A REMB or TMMBR: the rate becomes it, or the loss-based estimate when that is lower.
    private func applyCeiling(_ kbps: Int, reason: BitrateChangeReason) {
        let target = state.withLock { state -> Int in
            state.requestedCeilingKbps = kbps
            guard configuration.lossBasedRateControl, let estimate = state.lossEstimator.estimateKbps else {
                return kbps
            }
            return min(kbps, estimate)
        }
        _ = pipeline.withLock { $0.pipeline }?.setTargetBitrate(kbps: target, reason: reason)
    }

    /// A receiver report's loss: the loss-based estimate moves, and the rate follows it under the ceiling.
    private func applyLoss(_ fractionLost: Double) {
        guard let pipeline = pipeline.withLock({ $0.pipeline }) else { return }
        let current = pipeline.statistics.currentTargetKbps
        let target = state.withLock { state -> Int? in
            guard
                let estimate = state.lossEstimator.update(
                    fractionLost: fractionLost, currentKbps: current, nowNs: MonotonicClock.nowNs())
            else { return nil }
            state.statistics.lossBasedEstimateKbps = estimate
            return state.requestedCeilingKbps.map { min($0, estimate) } ?? estimate
        }
        if let target, target != current { _ = pipeline.setTargetBitrate(kbps: target, reason: .senderEstimate) }
    }

    /// Sends a compound RTCP packet: a sender report (NTP↔RTP mapping, packet and octet counts) and SDES with the
    /// CNAME, and a BYE when `bye` is set. Protected with SRTCP when SRTP is on.
    func sendReport(bye: Bool) {
        let nowNs = MonotonicClock.nowNs()
        let ntp = NTPClockMapping().ntp(atMonotonicNanoseconds: nowNs)
        // Frames carry their capture time on the 90 kHz clock, so the RTP time of "now" follows from the same clock.
        let rtpTimestamp = EncodedFrame.rtpTimestamp(fromNanoseconds: nowNs)
        let counts = state.withLock { ($0.statistics.packets, $0.statistics.bytes - $0.statistics.overheadBytes) }
        var packets: [RTCPPacket] = [
            .senderReport(
                RTCPSenderReport(
                    ssrc: ssrc, ntpTimestamp: ntp, rtpTimestamp: rtpTimestamp,
                    packetCount: UInt32(truncatingIfNeeded: counts.0), octetCount: UInt32(truncatingIfNeeded: counts.1))
            ),
            .sourceDescription([RTCPSourceDescriptionChunk(ssrc: ssrc, items: [.cname(configuration.cname)])]),
        ]
        if bye { packets.append(.goodbye(RTCPBye(ssrcs: [ssrc]))) }
        let sent =
            switch output {
            case .sockets(_, let rtcp, _, let rtcpRemote):
                rtcp.sendRTCP(packets, to: rtcpRemote, protectingWith: srtp)
            case .transport(let transport):
                CaptureCall.sendRTCP(packets, protectingWith: srtp) { transport.send($0) }
            }
        state.withLock {
            if sent { $0.statistics.rtcpSent += 1 } else { $0.statistics.sendErrors += 1 }
        }
    }
}

/// A weak reference to a sender, handed to its RTCP thread.
struct WeakSender: Sendable {
    weak var sender: VideoSender?
}
