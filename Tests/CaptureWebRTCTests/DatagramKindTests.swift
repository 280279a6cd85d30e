import CaptureWebRTC
import Testing

@Suite struct DatagramKindTests {
    static let cases: [([UInt8], DatagramKind)] = [
        ([0x00, 0x01], .stun),
        ([0x01, 0x01], .stun),
        ([22, 0xfe, 0xfd], .dtls),
        ([23, 0xfe, 0xfd], .dtls),
        ([0x80, 96], .rtp),
        ([0x80, 96 | 0x80], .rtp),
        ([0x80, 200], .rtcp),
        ([0x81, 205], .rtcp),
        ([0x81, 206], .rtcp),
        ([0x80], .unknown),
        ([0x40, 0x00], .unknown),
        ([0x10, 0x00], .unknown),
        ([], .unknown),
    ]

    @Test(arguments: cases)
    func classifiesByFirstByte(bytes: [UInt8], expected: DatagramKind) {
        let kind = bytes.withUnsafeBytes { DatagramKind(classifying: $0) }
        #expect(kind == expected)
    }
}
