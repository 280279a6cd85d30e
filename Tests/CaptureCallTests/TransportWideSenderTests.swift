import CaptureCore
import CaptureNet
import CaptureRTP
import CaptureVP8
import Testing

@testable import CaptureCall

/// ``RTPSendSession`` with the transport-wide sequence number: what leaves it, without SRTP, parsed back.
@Suite("TWCC: RTPSendSession numbers what it sends and reads transport-wide feedback")
struct TransportWideSenderTests {
    static let ssrc: UInt32 = 0x1111
    static let rtxSSRC: UInt32 = 0x2222

    /// A session sending with the extension under id 3 (and RTX), no SRTP.
    static func session(initial: UInt16 = 0xFFF0) throws -> RTPSendSession {
        let configuration = VideoSenderConfiguration(
            remote: .loopbackIPv4(port: 9), rtcpMux: true,
            packetizer: RTPPacketizerConfiguration(
                ssrc: ssrc, midExtensionID: 1, mid: "0", transportSequenceNumberExtensionID: 3),
            retransmission: RetransmissionConfiguration(rtxPayloadType: 97, rtxSSRC: rtxSSRC))
        return try RTPSendSession(
            configuration: configuration, nowNs: 0,
            transportWide: TransportWideSender(extensionID: 3, initialSequenceNumber: initial))
    }

    static func frame(_ index: Int, bytes: Int = 3_000) -> EncodedFrame {
        EncodedFrame(
            bytes: [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: bytes), isKeyFrame: index == 0,
            rtpTimestamp: UInt32(index * 3_000), captureTimeNs: 0, rotation: .degrees0,
            dimensions: Dimensions(width: 640, height: 480), qp: 30)
    }

    /// A datagram that left the session, parsed.
    struct Sent {
        var ssrc: UInt32
        var sequenceNumber: UInt16
        var transportNumber: UInt16?
        var size: Int
    }

    static func parse(_ datagram: UnsafeRawBufferPointer) throws -> Sent {
        let packet = try RTPPacket(parsing: datagram)
        return Sent(
            ssrc: packet.header.ssrc, sequenceNumber: packet.header.sequenceNumber,
            transportNumber: TransportSequenceNumberExtension.sequenceNumber(in: packet.header, id: 3),
            size: datagram.count)
    }

    static func receive(_ packets: [RTCPPacket], by session: RTPSendSession, nowNs: UInt64, sent: inout [Sent]) {
        var bytes = RTCPCompoundPacket.serialize(packets)
        bytes.withUnsafeMutableBytes { buffer in
            session.receiveRTCP(buffer, length: buffer.count, nowNs: nowNs, currentTargetKbps: nil) { datagram in
                if let parsed = try? parse(datagram) { sent.append(parsed) }
                return true
            }
        }
    }

    @Test("every packet carries the next number, across the 16-bit wrap; each is recorded with its RTP size")
    func consecutiveNumbers() throws {
        let session = try Self.session()
        var sent: [Sent] = []
        for index in 0..<10 {
            session.send(Self.frame(index), nowNs: UInt64(index) * 33_000_000) { datagram in
                sent.append(
                    (try? Self.parse(datagram)) ?? Sent(ssrc: 0, sequenceNumber: 0, transportNumber: nil, size: 0))
                return true
            }
        }
        let wide = try #require(session.transportWide)
        #expect(sent.count > 20)
        // The history's own unwrapped numbers: the highest is the last packet's.
        let highest = wide.history.highestSequenceNumber ?? 0
        for (index, packet) in sent.enumerated() {
            #expect(packet.transportNumber == 0xFFF0 &+ UInt16(index))
            let recorded = wide.history.packet(sequenceNumber: highest - Int64(sent.count - 1 - index))
            #expect(recorded?.wireSequenceNumber == packet.transportNumber)
            #expect(recorded?.size == packet.size, "no SRTP here: the RTP size is the datagram's")
            #expect(recorded?.ssrc == Self.ssrc)
            #expect(recorded?.isRetransmission == false)
        }
        #expect(wide.statistics.packetsSent == sent.count)
        #expect(wide.bytesInFlight == sent.reduce(0) { $0 + $1.size })
    }

    @Test("a packet that did not leave gives its number to the next one: no gap the peer would take for a loss")
    func unsentPacketKeepsItsNumber() throws {
        let session = try Self.session(initial: 100)
        var sent: [Sent] = []
        var attempt = 0
        session.send(Self.frame(0, bytes: 8_000), nowNs: 0) { datagram in
            attempt += 1
            guard attempt != 3 else { return false }
            if let parsed = try? Self.parse(datagram) { sent.append(parsed) }
            return true
        }
        #expect(sent.map(\.transportNumber) == (0..<sent.count).map { 100 + UInt16($0) })
        #expect(session.transportWide?.statistics.packetsSent == sent.count)
    }

    @Test("RTX: each retransmission carries a fresh number, recorded as a retransmission on the RTX SSRC")
    func retransmissionsGetFreshNumbers() throws {
        let session = try Self.session(initial: 1)
        var sent: [Sent] = []
        for index in 0..<3 {
            session.send(Self.frame(index), nowNs: UInt64(index) * 33_000_000) { datagram in
                if let parsed = try? Self.parse(datagram) { sent.append(parsed) }
                return true
            }
        }
        let first = sent[0].sequenceNumber
        let original = sent.count
        Self.receive(
            [
                .genericNACK(
                    senderSSRC: 5, mediaSSRC: Self.ssrc,
                    entries: RTCPNACKEntry.entries(for: [first, first &+ 2]))
            ], by: session, nowNs: 100_000_000, sent: &sent)
        // Asked again: a retransmission of a packet already retransmitted is a new packet too.
        Self.receive(
            [.genericNACK(senderSSRC: 5, mediaSSRC: Self.ssrc, entries: RTCPNACKEntry.entries(for: [first]))],
            by: session, nowNs: 200_000_000, sent: &sent)
        let retransmitted = sent[original...]
        #expect(retransmitted.count == 3)
        #expect(retransmitted.allSatisfy { $0.ssrc == Self.rtxSSRC })
        #expect(retransmitted.map(\.transportNumber) == [1, 2, 3].map { UInt16(original) + $0 })
        let numbers = sent.compactMap(\.transportNumber)
        #expect(Set(numbers).count == sent.count, "no number is used twice")
        let wide = try #require(session.transportWide)
        let last = wide.history.highestSequenceNumber.flatMap { wide.history.packet(sequenceNumber: $0) }
        #expect(last?.wireSequenceNumber == UInt16(original) + 3)
        #expect(last?.isRetransmission == true && last?.ssrc == Self.rtxSSRC)
        #expect(wide.statistics.retransmissionsSent == 3)
    }

    @Test("feedback becomes a report through pollFeedback: arrivals, losses, bytes in flight; junk is counted")
    func feedbackBecomesAReport() throws {
        let session = try Self.session(initial: 10)
        var sent: [Sent] = []
        session.send(Self.frame(0, bytes: 4_000), nowNs: 1_000_000_000) { datagram in
            if let parsed = try? Self.parse(datagram) { sent.append(parsed) }
            return true
        }
        #expect(sent.count >= 4)
        // Packets 10 and 12 arrived 5 ms apart, 11 did not; then statuses for numbers never sent.
        var statuses: [RTCPTransportFeedback.PacketStatus] = [
            .receivedSmallDelta(4), .notReceived, .receivedSmallDelta(20),
        ]
        statuses += Array(repeating: .receivedSmallDelta(1), count: sent.count - 3 + 5)
        let feedback = RTCPTransportFeedback(
            senderSSRC: 5, mediaSSRC: Self.ssrc, baseSequenceNumber: 10, referenceTime: 100, feedbackPacketCount: 0,
            packets: statuses)
        Self.receive([.transportFeedback(feedback)], by: session, nowNs: 1_050_000_000, sent: &sent)
        guard case .transportFeedback(let report) = session.pollFeedback() else {
            Issue.record("no report")
            return
        }
        #expect(report.packets.count == sent.count)
        #expect(report.unknownStatuses == 5)
        #expect(report.lostPackets == 1)
        let arrivals = report.packets.map(\.arrivalTimeNs)
        let first = try #require(arrivals[0])
        #expect(try #require(arrivals[2]) - first == 5_000_000)
        #expect(report.bytesInFlight == 0)
        let wide = try #require(session.transportWide)
        #expect(wide.statistics.feedbackMessages == 1)
        #expect(wide.statistics.packetsReportedLost == 1)
        #expect(wide.statistics.packetsReportedReceived == sent.count - 1)
        #expect(wide.statistics.unknownStatuses == 5)
        #expect(wide.statistics.lastNewestArrivalNs == arrivals.compactMap { $0 }.max())
    }

    @Test("without the extension there is no transport-wide sender and feedback is ignored")
    func notNegotiated() throws {
        let session = try RTPSendSession(
            configuration: VideoSenderConfiguration(remote: .loopbackIPv4(port: 9)), nowNs: 0,
            transportWide: TransportWideSender(extensionID: 3))
        #expect(session.transportWide == nil)
        var sent: [Sent] = []
        let feedback = RTCPTransportFeedback(
            senderSSRC: 5, mediaSSRC: 0, baseSequenceNumber: 0, referenceTime: 0, feedbackPacketCount: 0,
            packets: [.receivedSmallDelta(1)])
        Self.receive([.transportFeedback(feedback)], by: session, nowNs: 0, sent: &sent)
        #expect(session.pollFeedback() == nil)
    }
}

/// Plain RTP on loopback: a ``VideoSender`` numbering its packets and a ``VideoReceiver`` feeding them back.
@Suite("TWCC: VideoSender and VideoReceiver close the feedback loop on loopback", .serialized)
struct TransportWideLoopbackTests {
    @Test("the receiver feeds back about every 100 ms; the sender learns every packet arrived")
    func receiverFeedsBack() async throws {
        let receiver = try VideoReceiver(
            configuration: VideoReceiverConfiguration(
                local: .loopbackIPv4(port: 0), rtcpMux: true, transportSequenceNumberExtensionID: 3))
        let sender = try VideoSender(
            configuration: VideoSenderConfiguration(
                remote: receiver.localAddress, rtcpMux: true,
                packetizer: RTPPacketizerConfiguration(transportSequenceNumberExtensionID: 3)))
        // 45 frames about 33 ms apart (on a loaded machine the gaps grow: what is checked does not depend on them).
        let clock = ContinuousClock()
        let start = clock.now
        for index in 0..<45 {
            sender.consume(TransportWideSenderTests.frame(index, bytes: 2_500))
            try await Task.sleep(for: .milliseconds(33))
        }
        let sending = start.duration(to: clock.now)
        // Until the last feedback is back: the receiver has numbered every packet and the sender heard every message.
        let deadline = clock.now + .seconds(10)
        while clock.now < deadline {
            let numbered = receiver.statistics.transportNumberedPackets
            if numbered == sender.statistics.packets,
                sender.transportWideStatistics?.feedbackMessages == receiver.statistics.transportFeedbackSent
            {
                break
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        let sent = sender.statistics
        let wide = try #require(sender.transportWideStatistics)
        sender.finish()
        await receiver.stop()
        let received = receiver.statistics
        print(
            "loopback TWCC: \(wide.packetsSent) numbered, \(received.transportFeedbackSent) feedback sent, "
                + "\(wide.feedbackMessages) received, \(wide.packetsReportedReceived) reported received, "
                + "\(wide.packetsReportedLost) lost")
        #expect(wide.packetsSent == sent.packets)
        #expect(received.transportNumberedPackets == sent.packets)
        // About ten a second while packets arrive (the virtual-time tests check the interval; here a loaded machine
        // may stretch the frames' gaps, and no feedback goes out while nothing new arrived).
        #expect(received.transportFeedbackSent >= 5, "\(received.transportFeedbackSent) in \(sending)")
        #expect(wide.feedbackMessages == received.transportFeedbackSent)
        #expect(wide.packetsReportedReceived == sent.packets && wide.packetsReportedLost == 0)
    }
}
