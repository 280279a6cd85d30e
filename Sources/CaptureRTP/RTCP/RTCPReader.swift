/// A bounds-checked big-endian reader over one packet's bytes.
struct RTCPReader {
    let bytes: UnsafeRawBufferPointer
    var position: Int
    let end: Int

    /// Reads a big-endian 32-bit word and moves past it; the caller has checked the bounds.
    mutating func u32() -> UInt32 {
        defer { position += 4 }
        return bytes.rtpLoadUInt32(at: position)
    }

    /// Reads a big-endian 16-bit value and moves past it; the caller has checked the bounds.
    mutating func u16() -> UInt16 {
        defer { position += 2 }
        return bytes.rtpLoadUInt16(at: position)
    }

    /// Reads one byte and moves past it; the caller has checked the bounds.
    mutating func u8() -> UInt8 {
        defer { position += 1 }
        return bytes[position]
    }

    var remaining: Int { end - position }
}

extension RTCPCompoundPacket {
    /// Parses one RTCP datagram: a compound packet, or a single reduced-size packet (RFC 5506).
    ///
    /// The datagram is validated as a whole before anything is returned: each header's version must be 2, its length
    /// must fit, padding (P bit) must be sane, and counts must fit their packet. Hostile input gets a typed error.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(RTCPParseError) -> [RTCPPacket] {
        guard !bytes.isEmpty else { throw .empty }
        var packets: [RTCPPacket] = []
        var offset = 0
        while offset < bytes.count {
            guard bytes.count - offset >= 4 else { throw .truncatedHeader(offset: offset) }
            let first = bytes[offset]
            let version = first >> 6
            guard version == 2 else { throw .unsupportedVersion(version, offset: offset) }
            let hasPadding = first & 0x20 != 0
            let count = first & 0x1F
            let packetType = bytes[offset + 1]
            let length = ((Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])) + 1) * 4
            guard length <= bytes.count - offset else {
                throw .lengthExceedsDatagram(offset: offset, declared: length, available: bytes.count - offset)
            }
            var end = offset + length
            if hasPadding {
                let padding = Int(bytes[end - 1])
                guard padding > 0, padding <= length - 4 else { throw .invalidPadding(offset: offset, count: padding) }
                end -= padding
            }
            var reader = RTCPReader(bytes: bytes, position: offset + 4, end: end)
            packets.append(try parseBody(type: packetType, count: count, reader: &reader, offset: offset))
            offset += length
        }
        return packets
    }

    private static func parseBody(
        type: UInt8, count: UInt8, reader: inout RTCPReader, offset: Int
    ) throws(RTCPParseError) -> RTCPPacket {
        func need(_ bytes: Int) throws(RTCPParseError) {
            guard reader.remaining >= bytes else {
                throw .truncatedBody(packetType: type, offset: offset, needed: bytes, available: reader.remaining)
            }
        }
        switch (type, count) {
        case (RTCPPacketType.senderReport, _):
            try need(24 + Int(count) * 24)
            let ssrc = reader.u32()
            let ntp = NTPTimestamp(seconds: reader.u32(), fraction: reader.u32())
            let report = RTCPSenderReport(
                ssrc: ssrc, ntpTimestamp: ntp, rtpTimestamp: reader.u32(), packetCount: reader.u32(),
                octetCount: reader.u32(), reportBlocks: readBlocks(Int(count), &reader))
            return .senderReport(report)
        case (RTCPPacketType.receiverReport, _):
            try need(4 + Int(count) * 24)
            let ssrc = reader.u32()
            return .receiverReport(RTCPReceiverReport(ssrc: ssrc, reportBlocks: readBlocks(Int(count), &reader)))
        case (RTCPPacketType.sourceDescription, _):
            return .sourceDescription(try readChunks(Int(count), &reader, offset: offset))
        case (RTCPPacketType.goodbye, _):
            try need(Int(count) * 4)
            let ssrcs = (0..<Int(count)).map { _ in reader.u32() }
            var reason: String?
            if reader.remaining > 0 {
                let length = Int(reader.bytes[reader.position])
                try need(1 + length)
                // RFC 3550 §6.6: UTF-8 text. Bytes that are not are dropped (the BYE itself still counts), rather
                // than repaired into a different, longer string than the peer sent.
                reason = String(
                    validating: UnsafeRawBufferPointer(
                        rebasing: reader.bytes[reader.position + 1..<reader.position + 1 + length]),
                    as: UTF8.self)
            }
            return .goodbye(RTCPBye(ssrcs: ssrcs, reason: reason))
        case (RTCPPacketType.transportFeedback, RTCPFeedbackFormat.genericNACK):
            try need(8)
            let (sender, media) = (reader.u32(), reader.u32())
            let entries = (0..<reader.remaining / 4).map { _ in
                let word = reader.u32()
                return RTCPNACKEntry(packetID: UInt16(word >> 16), lostBitmask: UInt16(truncatingIfNeeded: word))
            }
            return .genericNACK(senderSSRC: sender, mediaSSRC: media, entries: entries)
        case (RTCPPacketType.transportFeedback, RTCPFeedbackFormat.tmmbr),
            (RTCPPacketType.transportFeedback, RTCPFeedbackFormat.tmmbn):
            try need(8)
            let sender = reader.u32()
            _ = reader.u32()  // media source SSRC: 0 for TMMBR/TMMBN
            let entries = (0..<reader.remaining / 8).map { _ in
                let ssrc = reader.u32()
                let word = reader.u32()
                return RTCPTMMBEntry(
                    ssrc: ssrc, exponent: UInt8(word >> 26), mantissa: (word >> 9) & 0x1_FFFF,
                    measuredOverhead: UInt16(word & 0x1FF))
            }
            return count == RTCPFeedbackFormat.tmmbr
                ? .temporaryMaximumBitrateRequest(senderSSRC: sender, entries: entries)
                : .temporaryMaximumBitrateNotification(senderSSRC: sender, entries: entries)
        case (RTCPPacketType.transportFeedback, RTCPFeedbackFormat.transportWideCC):
            return .transportFeedback(try RTCPTransportFeedback.parse(&reader, offset: offset))
        case (RTCPPacketType.payloadFeedback, RTCPFeedbackFormat.pli):
            try need(8)
            return .pictureLossIndication(senderSSRC: reader.u32(), mediaSSRC: reader.u32())
        case (RTCPPacketType.payloadFeedback, RTCPFeedbackFormat.fir):
            try need(8)
            let sender = reader.u32()
            _ = reader.u32()  // media source SSRC: 0 for FIR
            let entries = (0..<reader.remaining / 8).map { _ in
                let ssrc = reader.u32()
                let word = reader.u32()
                return RTCPFIREntry(ssrc: ssrc, sequenceNumber: UInt8(word >> 24))
            }
            return .fullIntraRequest(senderSSRC: sender, entries: entries)
        case (RTCPPacketType.payloadFeedback, RTCPFeedbackFormat.applicationLayer)
        where reader.remaining >= 16 && reader.bytes.rtpLoadUInt32(at: reader.position + 8) == rembIdentifier:
            let sender = reader.u32()
            _ = reader.u32()  // media source SSRC: 0 for REMB
            _ = reader.u32()  // "REMB"
            let word = reader.u32()
            let ssrcCount = Int(word >> 24)
            try need(ssrcCount * 4)
            let ssrcs = (0..<ssrcCount).map { _ in reader.u32() }
            return .receiverEstimatedMaximumBitrate(
                RTCPREMB(
                    senderSSRC: sender, exponent: UInt8((word >> 18) & 0x3F), mantissa: word & 0x3_FFFF, ssrcs: ssrcs))
        default:
            let payload = Array(UnsafeRawBufferPointer(rebasing: reader.bytes[reader.position..<reader.end]))
            return .unknown(packetType: type, count: count, payload: payload)
        }
    }

    private static func readBlocks(_ count: Int, _ reader: inout RTCPReader) -> [RTCPReportBlock] {
        (0..<count).map { _ in
            let ssrc = reader.u32()
            let lossWord = reader.u32()
            // Sign-extend the 24-bit cumulative loss.
            let cumulative = Int32(bitPattern: lossWord << 8) >> 8
            return RTCPReportBlock(
                ssrc: ssrc, fractionLost: UInt8(lossWord >> 24), cumulativeLost: cumulative,
                extendedHighestSequence: reader.u32(), jitter: reader.u32(), lastSenderReport: reader.u32(),
                delaySinceLastSenderReport: reader.u32())
        }
    }

    private static func readChunks(
        _ count: Int, _ reader: inout RTCPReader, offset: Int
    ) throws(RTCPParseError) -> [RTCPSourceDescriptionChunk] {
        let type = RTCPPacketType.sourceDescription
        var chunks: [RTCPSourceDescriptionChunk] = []
        for _ in 0..<count {
            guard reader.remaining >= 4 else {
                throw .truncatedBody(packetType: type, offset: offset, needed: 4, available: reader.remaining)
            }
            let chunkStart = reader.position
            let ssrc = reader.u32()
            var items: [RTCPSourceDescriptionItem] = []
            while true {
                guard reader.remaining >= 1 else {
                    throw .malformed(packetType: type, offset: offset, reason: "SDES chunk without its null terminator")
                }
                let itemType = reader.bytes[reader.position]
                if itemType == 0 {
                    // The terminator, then padding to the next 32-bit boundary.
                    let used = reader.position + 1 - chunkStart
                    reader.position = min(reader.end, reader.position + 1 + (4 - used % 4) % 4)
                    break
                }
                guard reader.remaining >= 2, reader.remaining >= 2 + Int(reader.bytes[reader.position + 1]) else {
                    throw .malformed(packetType: type, offset: offset, reason: "SDES item runs past the packet")
                }
                let length = Int(reader.bytes[reader.position + 1])
                let start = reader.position + 2
                items.append(
                    RTCPSourceDescriptionItem(
                        type: itemType,
                        value: Array(UnsafeRawBufferPointer(rebasing: reader.bytes[start..<start + length]))))
                reader.position = start + length
            }
            chunks.append(RTCPSourceDescriptionChunk(ssrc: ssrc, items: items))
        }
        return chunks
    }
}
