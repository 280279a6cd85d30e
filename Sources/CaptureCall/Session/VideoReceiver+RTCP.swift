internal import CaptureCore
internal import CaptureNet
internal import CaptureRTP
internal import Foundation

extension VideoReceiver {
    /// Reads the sender's RTCP: a sender report's NTP time (for LSR/DLSR in our reports). Anything malformed or
    /// unauthentic is counted and ignored.
    func handleRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int, nowNs: UInt64) {
        var length = length
        if let srtp {
            do throws(SRTPError) {
                try srtp.unprotectRTCP(buffer, length: &length)
            } catch {
                state.withLock { $0.srtpFailures += 1 }
                return
            }
        }
        let packets: [RTCPPacket]
        do throws(RTCPParseError) {
            packets = try RTCPCompoundPacket.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<length]))
        } catch {
            state.withLock { $0.malformed += 1 }
            return
        }
        for case .senderReport(let report) in packets {
            pipeline.withLock { pipeline in
                guard pipeline.peer == nil || pipeline.peer?.ssrc == report.ssrc else { return }
                pipeline.lastSenderReport = (report.ntpTimestamp.middle32, nowNs)
            }
            state.withLock { $0.senderReportsReceived += 1 }
        }
    }

    /// Sends a receiver report (with the sender's report block once its stream is valid) and SDES when one is due.
    func sendReportIfDue(nowNs: UInt64) {
        let report = pipeline.withLock { pipeline -> (SocketAddress, [RTCPReportBlock])? in
            guard let peer = pipeline.peer, pipeline.schedule.isDue(nowNs: nowNs) else { return nil }
            guard pipeline.receiveStatistics.isValid else { return (peer.rtcpAddress, []) }
            let block = pipeline.receiveStatistics.makeReportBlock(
                ssrc: peer.ssrc, nowNs: nowNs, lastSenderReport: pipeline.lastSenderReport)
            return (peer.rtcpAddress, [block])
        }
        guard let (address, blocks) = report else { return }
        let sent = send(
            [
                .receiverReport(RTCPReceiverReport(ssrc: configuration.ssrc, reportBlocks: blocks)),
                .sourceDescription([
                    RTCPSourceDescriptionChunk(ssrc: configuration.ssrc, items: [.cname(configuration.cname)])
                ]),
            ], to: address)
        state.withLock { if sent { $0.receiverReportsSent += 1 } else { $0.sendErrors += 1 } }
    }

    /// Sends the transport-wide feedback due at `nowNs` (each message in a compound packet of its own, led by an
    /// empty receiver report) to the sender.
    func sendTransportFeedbackIfDue(nowNs: UInt64) {
        let due = pipeline.withLock { pipeline -> (SocketAddress, [RTCPTransportFeedback], Int)? in
            guard let peer = pipeline.peer, let deadline = pipeline.transportFeedback?.nextDeadlineNs,
                nowNs >= deadline, let messages = pipeline.transportFeedback?.poll(nowNs: nowNs)
            else { return nil }
            return (peer.rtcpAddress, messages, pipeline.transportFeedback?.statistics.packetsRecorded ?? 0)
        }
        guard let (address, messages, recorded) = due else { return }
        var sent = 0
        var errors = 0
        for message in messages {
            let ok = send(
                [.receiverReport(RTCPReceiverReport(ssrc: configuration.ssrc)), .transportFeedback(message)],
                to: address)
            if ok { sent += 1 } else { errors += 1 }
        }
        state.withLock {
            $0.transportNumberedPackets = recorded
            $0.transportFeedbackSent += sent
            $0.sendErrors += errors
        }
    }

    /// Sends a PLI (in a compound packet led by a receiver report, as RFC 4585 asks) to the sender.
    func sendPictureLossIndication() {
        let peer = pipeline.withLock { $0.peer }
        guard let peer else { return }
        let sent = send(
            [
                .receiverReport(RTCPReceiverReport(ssrc: configuration.ssrc)),
                .pictureLossIndication(senderSSRC: configuration.ssrc, mediaSSRC: peer.ssrc),
            ], to: peer.rtcpAddress)
        state.withLock { if sent { $0.plisSent += 1 } else { $0.sendErrors += 1 } }
    }

    /// Sends a REMB asking the sender for `bitsPerSecond` (the rate test's hook, and what a bandwidth estimator
    /// would send). Returns whether the socket took it.
    @discardableResult
    public func sendEstimatedMaximumBitrate(bitsPerSecond: UInt64) -> Bool {
        let peer = pipeline.withLock { $0.peer }
        guard let peer else { return false }
        return send(
            [
                .receiverReport(RTCPReceiverReport(ssrc: configuration.ssrc)),
                .receiverEstimatedMaximumBitrate(
                    RTCPREMB(senderSSRC: configuration.ssrc, bitrate: bitsPerSecond, ssrcs: [peer.ssrc])),
            ], to: peer.rtcpAddress)
    }

    /// Serializes, protects (SRTCP) and sends one compound packet from the RTCP socket.
    private func send(_ packets: [RTCPPacket], to address: SocketAddress) -> Bool {
        rtcpSocket.sendRTCP(packets, to: address, protectingWith: srtcpOut)
    }
}
