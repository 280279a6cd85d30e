import CaptureRTP
import CaptureTestSupport
import Foundation
import Testing

/// Inputs the `rtcp` fuzz target found (Fixtures/fuzz/regressions/).
@Suite("RTCP fuzz regressions")
struct RTCPFuzzRegressionTests {
    /// Found as a broken invariant after 570,000 runs: a BYE whose 129-byte reason was not UTF-8 was read as a repaired
    /// string (a replacement character per bad byte, 3 bytes each), which serialized longer than 255 bytes, was cut,
    /// and parsed back as another reason.
    @Test("a BYE reason that is not UTF-8 reads as nil, and the compound packet survives serialize and parse")
    func byeReasonNotUTF8() throws {
        let bytes = [UInt8](try Data(contentsOf: Fixtures.url("fuzz/regressions/rtcp-bye-reason-not-utf8")))
        let packets = try parseRTCP(bytes)
        let bye = try #require(
            packets.compactMap { packet -> RTCPBye? in
                if case .goodbye(let bye) = packet { return bye }
                return nil
            }.first)
        #expect(bye.reason == nil)
        #expect(try parseRTCP(RTCPCompoundPacket.serialize(packets)) == packets)
    }

    @Test("a valid UTF-8 reason is kept")
    func byeReasonUTF8() throws {
        let packets: [RTCPPacket] = [.goodbye(RTCPBye(ssrcs: [7], reason: "caméra débranchée"))]
        #expect(try parseRTCP(RTCPCompoundPacket.serialize(packets)) == packets)
    }
}
