import CaptureRTP
import CaptureTestSupport
import Foundation
import Testing

/// Our serialized feedback as Wireshark reads it: a pcap of one IPv4/UDP datagram holding the generator's message,
/// decoded by `tshark -V` as RTCP. Skipped, with the reason, where tshark is not installed (`Scripts/install-deps
/// --test`): the byte-level checks against captured packets in CaptureRTPTests still run.
@Suite(.tags(.interop), .selectedByTags) struct TransportFeedbackTsharkTests {
    static let tshark = ExternalProcess.which("tshark")

    /// A classic pcap (LINKTYPE_RAW: IPv4 with no link header) of one UDP datagram from and to port 5005.
    static func pcap(udpPayload: [UInt8]) -> [UInt8] {
        func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        func le16(_ value: UInt16) -> [UInt8] { [UInt8(truncatingIfNeeded: value), UInt8(value >> 8)] }
        func be16(_ value: Int) -> [UInt8] {
            [UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
        }
        let udp = be16(5005) + be16(5005) + be16(8 + udpPayload.count) + [0, 0] + udpPayload
        var ip: [UInt8] = [0x45, 0] + be16(20 + udp.count) + [0, 0, 0x40, 0, 64, 17, 0, 0, 127, 0, 0, 1, 127, 0, 0, 1]
        var sum = stride(from: 0, to: 20, by: 2).reduce(UInt32(0)) { $0 + (UInt32(ip[$1]) << 8 | UInt32(ip[$1 + 1])) }
        while sum > 0xFFFF { sum = (sum & 0xFFFF) + (sum >> 16) }
        ip[10] = UInt8(truncatingIfNeeded: ~sum >> 8)
        ip[11] = UInt8(truncatingIfNeeded: ~sum)
        let frame = ip + udp
        let header = le32(0xA1B2_C3D4) + le16(2) + le16(4) + le32(0) + le32(0) + le32(65_535) + le32(101)
        let record = le32(1) + le32(0) + le32(UInt32(frame.count)) + le32(UInt32(frame.count))
        return header + record + frame
    }

    @Test(
        "tshark decodes our feedback's fields",
        // tshark (Wireshark) is not a dependency of the package; without it there is no independent decoder here.
        .enabled(if: tshark != nil, "tshark is not installed")
    )
    func tsharkDecodesOurFeedback() async throws {
        let tshark = try #require(Self.tshark)
        var generator = TransportFeedbackGenerator(configuration: .init(senderSSRC: 0x1111_1111))
        for (sequence, time) in TWCCArrivalScript.arrivals {
            generator.record(sequenceNumber: sequence, arrivalTimeNs: TWCCArrivalScript.at(time))
        }
        let feedback = try #require(generator.makeFeedback().first)
        let directory = try ExternalTools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("twcc.pcap")
        try Data(Self.pcap(udpPayload: RTCPPacket.transportFeedback(feedback).bytes)).write(to: file)
        let result = try await ExternalProcess.run(tshark, ["-r", file.path, "-d", "udp.port==5005,rtcp", "-V"])
        #expect(result.status == 0, "\(result.stderrText)")
        let text = result.stdoutText
        #expect(text.contains("Base Sequence Number: 65530"), "\(text)")
        #expect(text.contains("Packet Status Count: 11"))
        #expect(text.contains("Reference Time: 15625"))
        #expect(text.contains("Feedback Packets Count: 0"))
        // Every received packet's delta is listed with its sequence number.
        for sequence in [65530, 65531, 65532, 65533, 65534, 65535, 0, 2, 3, 4] {
            #expect(text.contains("[seq: \(sequence)]"), "seq \(sequence)")
        }
        #expect(!text.contains("Malformed"))
    }
}
