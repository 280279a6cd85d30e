extension RTCPPacket {
    /// The packet's wire bytes.
    public var bytes: [UInt8] {
        var bytes: [UInt8] = []
        serialize(into: &bytes)
        return bytes
    }

    /// Appends the packet's wire bytes to `bytes` (no padding bit; bodies are padded to 32 bits where the format
    /// requires it). Lists longer than their count field can say are cut: 31 report blocks, SDES chunks and BYE
    /// sources, 255 REMB sources, 255 octets of SDES item or BYE reason, 65 535 transport-feedback statuses.
    public func serialize(into bytes: inout [UInt8]) {
        let start = bytes.count
        switch self {
        case .senderReport(let report):
            let blocks = report.reportBlocks.prefix(31)
            header(count: UInt8(blocks.count), type: RTCPPacketType.senderReport, into: &bytes)
            for word in [
                report.ssrc, report.ntpTimestamp.seconds, report.ntpTimestamp.fraction, report.rtpTimestamp,
                report.packetCount, report.octetCount,
            ] { bytes.appendRTCPWord(word) }
            for block in blocks { block.serialize(into: &bytes) }
        case .receiverReport(let report):
            let blocks = report.reportBlocks.prefix(31)
            header(count: UInt8(blocks.count), type: RTCPPacketType.receiverReport, into: &bytes)
            bytes.appendRTCPWord(report.ssrc)
            for block in blocks { block.serialize(into: &bytes) }
        case .sourceDescription(let chunks):
            let chunks = chunks.prefix(31)
            header(count: UInt8(chunks.count), type: RTCPPacketType.sourceDescription, into: &bytes)
            for chunk in chunks {
                let chunkStart = bytes.count
                bytes.appendRTCPWord(chunk.ssrc)
                for item in chunk.items where item.type != 0 {
                    let value = item.value.prefix(255)
                    bytes.append(item.type)
                    bytes.append(UInt8(value.count))
                    bytes.append(contentsOf: value)
                }
                bytes.append(0)
                bytes.padRTCPToWord(from: chunkStart)
            }
        case .goodbye(let bye):
            let ssrcs = bye.ssrcs.prefix(31)
            header(count: UInt8(ssrcs.count), type: RTCPPacketType.goodbye, into: &bytes)
            for ssrc in ssrcs { bytes.appendRTCPWord(ssrc) }
            if let reason = bye.reason {
                let text = Array(reason.utf8.prefix(255))
                bytes.append(UInt8(text.count))
                bytes.append(contentsOf: text)
                bytes.padRTCPToWord(from: start)
            }
        case .genericNACK(let sender, let media, let entries):
            feedbackHeader(RTCPFeedbackFormat.genericNACK, RTCPPacketType.transportFeedback, sender, media, &bytes)
            for entry in entries { bytes.appendRTCPWord(UInt32(entry.packetID) << 16 | UInt32(entry.lostBitmask)) }
        case .temporaryMaximumBitrateRequest(let sender, let entries):
            feedbackHeader(RTCPFeedbackFormat.tmmbr, RTCPPacketType.transportFeedback, sender, 0, &bytes)
            for entry in entries { entry.serialize(into: &bytes) }
        case .temporaryMaximumBitrateNotification(let sender, let entries):
            feedbackHeader(RTCPFeedbackFormat.tmmbn, RTCPPacketType.transportFeedback, sender, 0, &bytes)
            for entry in entries { entry.serialize(into: &bytes) }
        case .transportFeedback(let feedback):
            feedbackHeader(
                RTCPFeedbackFormat.transportWideCC, RTCPPacketType.transportFeedback, feedback.senderSSRC,
                feedback.mediaSSRC, &bytes)
            feedback.serializeBody(into: &bytes)
        case .pictureLossIndication(let sender, let media):
            feedbackHeader(RTCPFeedbackFormat.pli, RTCPPacketType.payloadFeedback, sender, media, &bytes)
        case .fullIntraRequest(let sender, let entries):
            feedbackHeader(RTCPFeedbackFormat.fir, RTCPPacketType.payloadFeedback, sender, 0, &bytes)
            for entry in entries {
                bytes.appendRTCPWord(entry.ssrc)
                bytes.appendRTCPWord(UInt32(entry.sequenceNumber) << 24)
            }
        case .receiverEstimatedMaximumBitrate(let remb):
            let ssrcs = remb.ssrcs.prefix(255)
            feedbackHeader(
                RTCPFeedbackFormat.applicationLayer, RTCPPacketType.payloadFeedback, remb.senderSSRC, 0, &bytes)
            bytes.appendRTCPWord(rembIdentifier)
            bytes.appendRTCPWord(
                UInt32(ssrcs.count) << 24 | UInt32(remb.exponent & 0x3F) << 18 | remb.mantissa & 0x3_FFFF)
            for ssrc in ssrcs { bytes.appendRTCPWord(ssrc) }
        case .unknown(let type, let count, let payload):
            header(count: count, type: type, into: &bytes)
            bytes.append(contentsOf: payload)
            let padding = (4 - payload.count % 4) % 4
            if padding > 0 {
                // RFC 3550 padding (P bit, count in the last byte), so the payload parses back unchanged.
                bytes[start] |= 0x20
                bytes.append(contentsOf: repeatElement(0, count: padding - 1))
                bytes.append(UInt8(padding))
            }
        }
        // The length field: the packet's size in 32-bit words minus one.
        let words = (bytes.count - start) / 4 - 1
        bytes[start + 2] = UInt8(truncatingIfNeeded: words >> 8)
        bytes[start + 3] = UInt8(truncatingIfNeeded: words)
    }

    private func header(count: UInt8, type: UInt8, into bytes: inout [UInt8]) {
        bytes.append(0x80 | count & 0x1F)
        bytes.append(type)
        bytes.append(0)
        bytes.append(0)
    }

    private func feedbackHeader(
        _ format: UInt8, _ type: UInt8, _ sender: UInt32, _ media: UInt32, _ bytes: inout [UInt8]
    ) {
        header(count: format, type: type, into: &bytes)
        bytes.appendRTCPWord(sender)
        bytes.appendRTCPWord(media)
    }
}

extension RTCPReportBlock {
    func serialize(into bytes: inout [UInt8]) {
        bytes.appendRTCPWord(ssrc)
        bytes.appendRTCPWord(UInt32(fractionLost) << 24 | UInt32(bitPattern: cumulativeLost) & 0xFF_FFFF)
        bytes.appendRTCPWord(extendedHighestSequence)
        bytes.appendRTCPWord(jitter)
        bytes.appendRTCPWord(lastSenderReport)
        bytes.appendRTCPWord(delaySinceLastSenderReport)
    }
}

extension RTCPTMMBEntry {
    func serialize(into bytes: inout [UInt8]) {
        bytes.appendRTCPWord(ssrc)
        bytes.appendRTCPWord(
            UInt32(exponent & 0x3F) << 26 | (mantissa & 0x1_FFFF) << 9 | UInt32(measuredOverhead & 0x1FF))
    }
}

extension [UInt8] {
    mutating func appendRTCPWord(_ word: UInt32) {
        append(UInt8(truncatingIfNeeded: word >> 24))
        append(UInt8(truncatingIfNeeded: word >> 16))
        append(UInt8(truncatingIfNeeded: word >> 8))
        append(UInt8(truncatingIfNeeded: word))
    }

    mutating func padRTCPToWord(from start: Int) {
        while (count - start) % 4 != 0 { append(0) }
    }
}
