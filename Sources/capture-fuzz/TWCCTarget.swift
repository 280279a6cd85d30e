import CaptureRTP

extension FuzzTarget {
    /// Transport-wide congestion control feedback (RTPFB FMT 15) and the send history that consumes it. The input is
    /// the message's body after the RTCP header (SSRCs, base, count, reference time, chunks, deltas): the target adds
    /// the header with the right length, so every input reaches the feedback parser. A file of a whole RTCP packet
    /// (`0x8F 0xCD …`) is taken as it is.
    ///
    /// Invariants: what parses serializes and parses back to the same packets; a ``TransportSendHistory`` that sent
    /// sequence numbers around the message's base turns it into a report that accounts for every status once and
    /// never counts bytes in flight below zero.
    static let twcc = FuzzTarget(name: "twcc") { bytes in
        var datagram: [UInt8]
        if bytes.count >= 4, bytes[0] & 0xDF == 0x8F, bytes[1] == 205 {
            datagram = Array(bytes)
        } else {
            let body = Array(bytes.prefix(4 * 0xFFFF))
            let padding = (4 - body.count % 4) % 4
            let words = (4 + body.count + padding) / 4 - 1
            datagram = [0x8F, 205, UInt8(truncatingIfNeeded: words >> 8), UInt8(truncatingIfNeeded: words)]
            datagram += body + repeatElement(0, count: padding)
        }
        guard let packets = datagram.withUnsafeBytes({ try? RTCPCompoundPacket.parse($0) }) else { return }
        let written = RTCPCompoundPacket.serialize(packets)
        let again = written.withUnsafeBytes { try? RTCPCompoundPacket.parse($0) }
        precondition(again == packets, "TWCC feedback did not survive serialize and parse")
        for case .transportFeedback(let feedback) in packets {
            var history = TransportSendHistory(capacity: 256)
            let first = feedback.baseSequenceNumber &- 100
            for offset in UInt16(0)..<300 {
                history.record(
                    sequenceNumber: first &+ offset, sendTimeNs: UInt64(offset) * 1_000_000, size: 1000,
                    ssrc: feedback.mediaSSRC, isRetransmission: offset % 7 == 0)
            }
            let inFlight = history.bytesInFlight
            let report = history.process(feedback, receivedAtNs: 1_000_000_000)
            precondition(
                report.packets.count + report.unknownStatuses + report.repeatedStatuses == feedback.packetStatusCount,
                "a status was not accounted for")
            precondition(report.bytesInFlight >= 0 && report.bytesInFlight <= inFlight, "bytes in flight went wrong")
            precondition(report.newlyAckedBytes == 1000 * report.packets.count(where: \.isReceived), "acked bytes")
            let repeated = history.process(feedback, receivedAtNs: 1_100_000_000)
            precondition(repeated.newlyAckedBytes == 0, "a repeated message acked bytes again")
        }
    }
}
