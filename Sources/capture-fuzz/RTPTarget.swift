import CaptureRTP

extension FuzzTarget {
    /// The RTP depacketizer: the input is a sequence of datagrams, each preceded by a 2-byte big-endian length. Each
    /// is parsed as an RTP packet (header, CSRCs, RFC 8285 extensions, padding), its payload as a VP8 payload
    /// descriptor, and it goes into one `VP8FrameAssembler` (reordering, loss, wrap, key-frame wait), which must
    /// never hand out a frame whose bytes lie outside what it was given.
    static let rtp = FuzzTarget(name: "rtp") { bytes in
        let assembler = VP8FrameAssembler()
        var offset = 0
        var arrivalNs: UInt64 = 1_000_000
        while offset + 2 <= bytes.count {
            let length = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
            offset += 2
            let datagram = UnsafeRawBufferPointer(rebasing: bytes[offset..<min(bytes.count, offset + length)])
            offset += datagram.count
            if let packet = try? RTPPacket(parsing: datagram) {
                precondition(packet.payloadRange.upperBound <= datagram.count, "payload beyond the datagram")
                let payload = UnsafeRawBufferPointer(rebasing: datagram[packet.payloadRange])
                if let (_, size) = try? VP8PayloadDescriptor.parse(payload) {
                    precondition(size <= payload.count, "descriptor longer than the payload")
                }
            }
            for event in assembler.insert(datagram, arrivalTimeNs: arrivalNs) {
                if case .frame(let frame) = event {
                    precondition(!frame.bytes.isEmpty, "an assembled frame with no bytes")
                }
            }
            arrivalNs += 3_000_000
        }
    }
}
