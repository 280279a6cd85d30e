import CaptureRTP

extension FuzzTarget {
    /// The RTCP parser: a compound packet (SR, RR, SDES, BYE, APP, PLI, FIR, REMB, TMMBR, generic NACK…). Whatever
    /// parses must serialize and parse again to the same packets.
    static let rtcp = FuzzTarget(name: "rtcp") { bytes in
        guard let packets = try? RTCPCompoundPacket.parse(bytes) else { return }
        let written = RTCPCompoundPacket.serialize(packets)
        let again = written.withUnsafeBytes { try? RTCPCompoundPacket.parse($0) }
        precondition(again == packets, "RTCP packets did not survive serialize and parse")
    }
}
