internal import CaptureCore
internal import CaptureNet
internal import CaptureRTP
internal import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension VideoSender {
    /// The RTCP thread: reads the peer's RTCP from the sender's own socket (with a short timeout, so it also serves as
    /// the report timer; with a transport, which delivers the RTCP itself, it only waits) and sends a sender report
    /// when one is due. Holds the sender weakly between packets, so that dropping it ends the loop.
    static func rtcpLoop(_ weakSender: WeakSender) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
        defer { buffer.deallocate() }
        // Only the socket is taken from the sender here: holding the sender itself would keep it alive.
        guard let socket = rtcpSocket(of: weakSender) else { return }
        defer { weakSender.sender?.rtcpThreadOrFinishEnded(finish: false) }
        while let sender = weakSender.sender, sender.running.withLock({ $0 }) {
            if let socket {
                let received: (count: Int, source: SocketAddress)?
                do throws(SocketError) {
                    received = try socket.receive(into: buffer, timeout: .milliseconds(50))
                } catch {
                    break  // Closed: the sender finished.
                }
                if let received { sender.receiveRTCP(buffer, length: received.count) }
            } else {
                // blocking: the sender's RTCP thread paces its report timer (a transport delivers the RTCP).
                usleep(20_000)
            }
            let nowNs = MonotonicClock.nowNs()
            sender.session.withLock { session in session.reportIfDue(nowNs: nowNs, output: sender.sendRTCPDatagram) }
        }
    }

    /// The sender's own RTCP socket (`.some(nil)` with a transport), or `nil` when the sender is gone.
    private static func rtcpSocket(of weakSender: WeakSender) -> UDPSocket?? {
        guard let sender = weakSender.sender else { return nil }
        if case .sockets(_, let rtcp, _, _) = sender.output { return .some(rtcp) }
        return .some(nil)
    }

    /// Takes one RTCP datagram from the peer (SRTCP when SRTP is on: it is unprotected in place in `buffer`), parses
    /// it and acts on it (see ``RTPSendSession/receiveRTCP(_:length:nowNs:currentTargetKbps:output:)``). A
    /// `PacketTransport`'s owner calls it for the RTCP it receives; a sender with its own sockets reads them itself.
    /// Any thread.
    public func receiveRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) {
        let pipeline = pipeline.withLock { $0.pipeline }
        let current = pipeline?.statistics.currentTargetKbps
        let nowNs = MonotonicClock.nowNs()
        // A copy (RTCP is a few datagrams a second): the caller's buffer would join the locked session's region.
        var bytes = Array(UnsafeRawBufferPointer(rebasing: buffer[0..<min(max(0, length), buffer.count)]))
        let feedback = session.withLock { session -> [RTPSenderFeedback] in
            bytes.withUnsafeMutableBytes { raw in
                session.receiveRTCP(raw, length: raw.count, nowNs: nowNs, currentTargetKbps: current, output: sendRTP)
            }
            var feedback: [RTPSenderFeedback] = []
            while let next = session.pollFeedback() { feedback.append(next) }
            return feedback
        }
        guard let pipeline else { return }
        for request in feedback { pipeline.apply(request) }
    }

    /// Sends a compound RTCP packet: a sender report and SDES, and a BYE when `bye` is set.
    func sendReport(bye: Bool) {
        let nowNs = MonotonicClock.nowNs()
        session.withLock { session in session.sendReport(nowNs: nowNs, bye: bye, output: sendRTCPDatagram) }
    }
}

extension SendPipeline {
    /// Does what the peer's RTCP asked: a key frame, or a new target rate (transport-wide feedback is ignored).
    package func apply(_ feedback: RTPSenderFeedback) {
        switch feedback {
        case .keyFrameRequest(let reason): requestKeyFrame(reason: reason)
        case .targetBitrate(let kbps, let reason): _ = setTargetBitrate(kbps: kbps, reason: reason)
        // Transport-wide feedback and round-trip times are for a congestion controller; the pipeline has none.
        case .transportFeedback, .roundTripTime: break
        }
    }
}

/// A weak reference to a sender, handed to its RTCP thread.
struct WeakSender: Sendable {
    weak var sender: VideoSender?
}
