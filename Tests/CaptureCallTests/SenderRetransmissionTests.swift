import CaptureCall
import CaptureCore
import CaptureNet
import CaptureRTP
import CaptureTestSupport
import CaptureVP8
import Foundation
import Testing

/// A ``PacketTransport`` that keeps what it is given.
final class RecordingTransport: PacketTransport {
    let localAddress = SocketAddress.loopbackIPv4(port: 9)
    private let sent = Locked<[[UInt8]]>([])

    var datagrams: [[UInt8]] { sent.withLock { $0 } }

    func send(_ datagram: UnsafeRawBufferPointer) -> Bool {
        sent.withLock { $0.append(Array(datagram)) }
        return true
    }
}

@Suite("VideoSender: NACK, RTX and first-transmission loss")
struct SenderRetransmissionTests {
    /// Ages only the history's size judges here: a sanitized or starved run can take seconds between a frame and
    /// its NACK, which the default 1.5 s would count as too old.
    static let noAgeLimit = Duration.seconds(600)

    static func frame(size: Int, seed: UInt64) -> EncodedFrame {
        var generator = SeededGenerator(state: seed)
        return EncodedFrame(
            bytes: (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }, isKeyFrame: true,
            rtpTimestamp: 0, captureTimeNs: MonotonicClock.nowNs(), rotation: .degrees0,
            dimensions: Dimensions(width: 640, height: 480), qp: 30)
    }

    static func rtp(_ datagrams: [[UInt8]]) throws -> [RTPPacket] {
        try datagrams.filter { DatagramIsRTCP.check($0) == false }.map { bytes in
            try bytes.withUnsafeBytes { try RTPPacket(parsing: $0) }
        }
    }

    /// A sender (SSRC 0xCAFE, sequence numbers from 100) over a recording transport.
    static func sender(
        retransmission: RetransmissionConfiguration, loss: SimulatedLoss? = nil
    ) throws -> (VideoSender, RecordingTransport) {
        let transport = RecordingTransport()
        let sender = try VideoSender(
            configuration: VideoSenderConfiguration(
                remote: .loopbackIPv4(port: 9),
                packetizer: RTPPacketizerConfiguration(ssrc: 0xCAFE, initialSequenceNumber: 100),
                retransmission: retransmission, firstTransmissionLoss: loss),
            transport: transport)
        return (sender, transport)
    }

    /// Hands the sender a NACK for `lost` as the peer would.
    static func nack(_ lost: [UInt16], to sender: VideoSender) {
        var bytes = RTCPCompoundPacket.serialize([
            .genericNACK(senderSSRC: 1, mediaSSRC: sender.ssrc, entries: RTCPNACKEntry.entries(for: lost))
        ])
        let length = bytes.count
        bytes.withUnsafeMutableBytes { sender.receiveRTCP($0, length: length) }
    }

    @Test("NACKed packets come back as RTX: own SSRC and payload type, original sequence number first")
    func rtxAnswers() throws {
        let (sender, transport) = try Self.sender(
            retransmission: RetransmissionConfiguration(
                rtxPayloadType: 97, rtxSSRC: 0xBEEF, maximumAge: Self.noAgeLimit))
        defer { sender.finish() }
        sender.consume(Self.frame(size: 6_000, seed: 1))
        let media = try Self.rtp(transport.datagrams)
        #expect(media.count == 6)
        let lost = [
            media[1].header.sequenceNumber, media[4].header.sequenceNumber, media[5].header.sequenceNumber &+ 10,
        ]
        Self.nack(lost, to: sender)
        let rtx = try Self.rtp(transport.datagrams).filter { $0.header.ssrc == 0xBEEF }
        #expect(rtx.count == 2)
        for (packet, original) in zip(rtx, [media[1], media[4]]) {
            #expect(packet.header.payloadType == 97)
            #expect(packet.header.timestamp == original.header.timestamp)
        }
        let originalNumbers = transport.datagrams.compactMap { bytes -> UInt16? in
            guard let packet = try? bytes.withUnsafeBytes({ try RTPPacket(parsing: $0) }),
                packet.header.ssrc == 0xBEEF
            else { return nil }
            return UInt16(bytes[packet.payloadRange.lowerBound]) << 8
                | UInt16(bytes[packet.payloadRange.lowerBound + 1])
        }
        #expect(originalNumbers == [media[1].header.sequenceNumber, media[4].header.sequenceNumber])
        let statistics = sender.statistics
        #expect(statistics.nacksReceived == 1)
        #expect(statistics.packetsRequested == 3)
        #expect(statistics.retransmissions == 2)
        #expect(statistics.retransmissionsUnknown == 1, "a number never sent (ahead of the newest) is not served")
    }

    @Test("without RTX the original packet goes again on the media SSRC; too-old requests are counted")
    func plainResendAndAge() throws {
        let (sender, transport) = try Self.sender(
            retransmission: RetransmissionConfiguration(
                rtxPayloadType: nil, historyPackets: 16, maximumAge: Self.noAgeLimit))
        defer { sender.finish() }
        for seed in 1...10 { sender.consume(Self.frame(size: 3_000, seed: UInt64(seed))) }
        let media = try Self.rtp(transport.datagrams)
        #expect(media.count == 30)
        Self.nack([media[29].header.sequenceNumber, media[0].header.sequenceNumber], to: sender)
        let all = transport.datagrams.filter { DatagramIsRTCP.check($0) == false }
        #expect(all.count == 31)
        #expect(all.last == transport.datagrams.filter { DatagramIsRTCP.check($0) == false }[29])
        let statistics = sender.statistics
        #expect(statistics.retransmissions == 1)
        #expect(statistics.retransmissionsTooOld == 1, "16 slots: the first of 30 packets was overwritten")
    }

    @Test("first-transmission loss drops a reproducible share of packets, and only first transmissions")
    func firstTransmissionLoss() throws {
        let (sender, transport) = try Self.sender(
            retransmission: RetransmissionConfiguration(
                rtxPayloadType: 97, rtxSSRC: 0xBEEF, maximumAge: Self.noAgeLimit),
            loss: SimulatedLoss(percent: 20, seed: 42))
        defer { sender.finish() }
        for seed in 1...20 { sender.consume(Self.frame(size: 5_000, seed: UInt64(seed))) }
        let statistics = sender.statistics
        let media = try Self.rtp(transport.datagrams)
        #expect(statistics.firstTransmissionsDropped + media.count == 100)
        #expect((10...30).contains(statistics.firstTransmissionsDropped))
        // Every dropped number is NACKed and comes back: retransmissions are never dropped.
        let sent = Set(media.map(\.header.sequenceNumber))
        let first = media.map(\.header.sequenceNumber).min() ?? 0
        let missing = (0..<100).map { first &+ UInt16($0) }.filter { !sent.contains($0) }
        Self.nack(missing, to: sender)
        #expect(sender.statistics.retransmissions == missing.count)
    }
}

extension SenderRetransmissionTests {
    @Test("a packet older than the maximum age is not resent (the receiver has given up on it)")
    func maximumAge() async throws {
        let (sender, transport) = try Self.sender(
            retransmission: RetransmissionConfiguration(
                rtxPayloadType: 97, rtxSSRC: 0xBEEF, maximumAge: .milliseconds(50)))
        defer { sender.finish() }
        sender.consume(Self.frame(size: 1_000, seed: 3))
        let first = try #require(try Self.rtp(transport.datagrams).first)
        try await Task.sleep(for: .milliseconds(100))
        Self.nack([first.header.sequenceNumber], to: sender)
        #expect(sender.statistics.retransmissions == 0)
        #expect(sender.statistics.retransmissionsTooOld == 1)
    }
}

/// RTCP (payload types 192–223 in the second byte, RFC 5761) among the recorded datagrams.
enum DatagramIsRTCP {
    static func check(_ bytes: [UInt8]) -> Bool { bytes.count >= 2 && (192...223).contains(bytes[1]) }
}
