extension RTCPTransportFeedback {
    /// The most body bytes one RTCP packet can hold after its 12-byte feedback header (the 16-bit length field
    /// counts 32-bit words).
    static let maximumBodySize = 0x1_0000 * 4 - 12
    /// Bytes of a serialized message before its chunks: RTCP header, SSRCs, base/count, reference time/fb count.
    static let headerSize = 20

    /// The serialized size of a message with `chunks` status chunks and `deltaBytes` of receive deltas, padded.
    static func serializedSize(chunks: Int, deltaBytes: Int) -> Int {
        (headerSize + 2 * chunks + deltaBytes + 3) / 4 * 4
    }

    /// The bytes a status's receive delta takes (0, 1 or 2).
    static func deltaSize(symbol: UInt8) -> Int { Int(symbol) }

    /// The most statuses reserved ahead of parsing.
    static let statusesReserved = 256

    /// Parses the body after the 4-byte RTCP header (FMT 15 of PT 205); `reader` ends at the packet's end, RTCP
    /// padding already removed. `offset` is the packet's offset in its datagram, for errors.
    static func parse(_ reader: inout RTCPReader, offset: Int) throws(RTCPParseError) -> RTCPTransportFeedback {
        let type = RTCPPacketType.transportFeedback
        guard reader.remaining >= 16 else {
            throw .truncatedBody(packetType: type, offset: offset, needed: 16, available: reader.remaining)
        }
        let sender = reader.u32()
        let media = reader.u32()
        let countWord = reader.u32()
        let timeWord = reader.u32()
        let statusCount = Int(countWord & 0xFFFF)
        guard statusCount > 0 else {
            throw .malformed(packetType: type, offset: offset, reason: "transport feedback with a status count of 0")
        }
        // The statuses, with placeholder deltas. Reserved from the count up to 256 (one allocation for a usual
        // message: 100 ms of packets); never beyond, as the peer chose the count.
        var packets: [PacketStatus] = []
        packets.reserveCapacity(min(statusCount, Self.statusesReserved))
        while packets.count < statusCount {
            guard reader.remaining >= 2 else {
                throw .truncatedBody(packetType: type, offset: offset, needed: 2, available: reader.remaining)
            }
            let chunk = reader.u16()
            let left = statusCount - packets.count
            if chunk & 0x8000 == 0 {
                // Run length: 0 SS LLLLLLLLLLLLL (a run longer than what is left covers only what is left).
                let run = min(Int(chunk & 0x1FFF), left)
                guard run > 0 else { continue }
                guard let status = placeholder(symbol: UInt8(chunk >> 13 & 0x03)) else {
                    throw .malformed(packetType: type, offset: offset, reason: "reserved status symbol in a run")
                }
                packets.append(contentsOf: repeatElement(status, count: run))
            } else if chunk & 0x4000 == 0 {
                // 1-bit vector: 14 symbols, not received or small delta.
                for index in 0..<min(TransportFeedbackChunkEncoder.oneBitCapacity, left) {
                    packets.append(chunk >> (13 - index) & 0x01 == 0 ? .notReceived : .receivedSmallDelta(0))
                }
            } else {
                // 2-bit vector: 7 symbols.
                for index in 0..<min(TransportFeedbackChunkEncoder.twoBitCapacity, left) {
                    guard let status = placeholder(symbol: UInt8(chunk >> (2 * (6 - index)) & 0x03)) else {
                        throw .malformed(packetType: type, offset: offset, reason: "reserved status symbol in a vector")
                    }
                    packets.append(status)
                }
            }
        }
        for index in packets.indices {
            switch packets[index] {
            case .notReceived:
                continue
            case .receivedSmallDelta:
                guard reader.remaining >= 1 else {
                    throw .truncatedBody(packetType: type, offset: offset, needed: 1, available: 0)
                }
                packets[index] = .receivedSmallDelta(reader.u8())
            case .receivedLargeDelta:
                guard reader.remaining >= 2 else {
                    throw .truncatedBody(packetType: type, offset: offset, needed: 2, available: reader.remaining)
                }
                packets[index] = .receivedLargeDelta(Int16(bitPattern: reader.u16()))
            }
        }
        // Zero padding to 32 bits (without the P bit) is at most 3 bytes; anything longer is not this message.
        guard reader.remaining <= 3 else {
            throw .malformed(
                packetType: type, offset: offset,
                reason: "\(reader.remaining) bytes after the transport feedback's receive deltas")
        }
        reader.position = reader.end
        return RTCPTransportFeedback(
            senderSSRC: sender, mediaSSRC: media, baseSequenceNumber: UInt16(truncatingIfNeeded: countWord >> 16),
            referenceTime: signExtend24(timeWord >> 8), feedbackPacketCount: UInt8(truncatingIfNeeded: timeWord),
            packets: packets)
    }

    /// A status for `symbol` with a zero delta, or `nil` for the reserved symbol 3.
    private static func placeholder(symbol: UInt8) -> PacketStatus? {
        switch symbol {
        case 0: .notReceived
        case 1: .receivedSmallDelta(0)
        case 2: .receivedLargeDelta(0)
        default: nil
        }
    }

    /// Appends everything after the 12-byte feedback header: base sequence number and status count, reference time
    /// and feedback count, chunks, deltas, zero padding to 32 bits. Statuses past 65 535 or past what fits one RTCP
    /// packet are left out (and the count says so).
    func serializeBody(into bytes: inout [UInt8]) {
        let start = bytes.count
        bytes.appendRTCPWord(UInt32(baseSequenceNumber) << 16)  // the count is written below
        bytes.appendRTCPWord(UInt32(bitPattern: referenceTime) << 8 | UInt32(feedbackPacketCount))
        var encoder = TransportFeedbackChunkEncoder()
        var deltaBytes = 0
        var count = 0
        for status in packets.prefix(Self.maximumPacketStatusCount) {
            let symbol = status.symbol
            let deltaSize = Self.deltaSize(symbol: symbol)
            guard 8 + 2 * encoder.chunkCount(afterAdding: symbol) + deltaBytes + deltaSize <= Self.maximumBodySize
            else { break }
            if let chunk = encoder.add(symbol) { bytes.appendRTCPHalfWord(chunk) }
            deltaBytes += deltaSize
            count += 1
        }
        if let chunk = encoder.finish() { bytes.appendRTCPHalfWord(chunk) }
        bytes[start + 2] = UInt8(truncatingIfNeeded: count >> 8)
        bytes[start + 3] = UInt8(truncatingIfNeeded: count)
        for status in packets.prefix(count) {
            switch status {
            case .notReceived: continue
            case .receivedSmallDelta(let delta): bytes.append(delta)
            case .receivedLargeDelta(let delta): bytes.appendRTCPHalfWord(UInt16(bitPattern: delta))
            }
        }
        bytes.padRTCPToWord(from: start)
    }
}

extension [UInt8] {
    mutating func appendRTCPHalfWord(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value >> 8))
        append(UInt8(truncatingIfNeeded: value))
    }
}
