/// An RTCP sender report (RFC 3550 §6.4.1).
public struct RTCPSenderReport: Sendable, Hashable, Codable {
    /// The sender's SSRC.
    public var ssrc: UInt32
    /// The wall-clock time at which the report was sent.
    public var ntpTimestamp: NTPTimestamp
    /// The same instant in the RTP media clock.
    public var rtpTimestamp: UInt32
    /// Packets sent since the start of transmission.
    public var packetCount: UInt32
    /// Payload octets sent since the start of transmission.
    public var octetCount: UInt32
    /// Reception reports about the sources this sender hears (at most 31 are serialized).
    public var reportBlocks: [RTCPReportBlock]

    /// Creates a sender report.
    public init(
        ssrc: UInt32, ntpTimestamp: NTPTimestamp, rtpTimestamp: UInt32, packetCount: UInt32, octetCount: UInt32,
        reportBlocks: [RTCPReportBlock] = []
    ) {
        self.ssrc = ssrc
        self.ntpTimestamp = ntpTimestamp
        self.rtpTimestamp = rtpTimestamp
        self.packetCount = packetCount
        self.octetCount = octetCount
        self.reportBlocks = reportBlocks
    }
}

/// An RTCP receiver report (RFC 3550 §6.4.2).
public struct RTCPReceiverReport: Sendable, Hashable, Codable {
    /// The reporter's SSRC.
    public var ssrc: UInt32
    /// Reception reports (at most 31 are serialized).
    public var reportBlocks: [RTCPReportBlock]

    /// Creates a receiver report.
    public init(ssrc: UInt32, reportBlocks: [RTCPReportBlock] = []) {
        self.ssrc = ssrc
        self.reportBlocks = reportBlocks
    }
}

/// One item of an SDES chunk (RFC 3550 §6.5): a type (1 = CNAME, 2 = NAME, ...) and up to 255 octets of text.
public struct RTCPSourceDescriptionItem: Sendable, Hashable, Codable {
    /// The item type of a canonical name.
    public static let cnameType: UInt8 = 1

    /// The item type (never 0, which ends a chunk).
    public var type: UInt8
    /// The item's bytes (UTF-8 text; at most 255 are serialized).
    public var value: [UInt8]

    /// Creates an item from raw bytes.
    public init(type: UInt8, value: [UInt8]) {
        self.type = type
        self.value = value
    }

    /// A CNAME item.
    public static func cname(_ name: String) -> RTCPSourceDescriptionItem {
        RTCPSourceDescriptionItem(type: cnameType, value: Array(name.utf8))
    }

    /// The value decoded as UTF-8 (invalid sequences repaired).
    public var text: String { String(decoding: value, as: UTF8.self) }
}

/// One SDES chunk: a source and its items.
public struct RTCPSourceDescriptionChunk: Sendable, Hashable, Codable {
    /// The source described.
    public var ssrc: UInt32
    /// Its items.
    public var items: [RTCPSourceDescriptionItem]

    /// Creates a chunk.
    public init(ssrc: UInt32, items: [RTCPSourceDescriptionItem]) {
        self.ssrc = ssrc
        self.items = items
    }

    /// The chunk's CNAME, if it has one.
    public var cname: String? { items.first { $0.type == RTCPSourceDescriptionItem.cnameType }?.text }
}

/// A BYE packet (RFC 3550 §6.6).
public struct RTCPBye: Sendable, Hashable, Codable {
    /// The sources leaving (at most 31 are serialized).
    public var ssrcs: [UInt32]
    /// The optional reason for leaving (at most 255 octets are serialized). A received reason that is not valid
    /// UTF-8 reads as `nil`.
    public var reason: String?

    /// Creates a BYE.
    public init(ssrcs: [UInt32], reason: String? = nil) {
        self.ssrcs = ssrcs
        self.reason = reason
    }
}

/// One Full Intra Request entry (RFC 5104 §4.3.1): the media source asked for a key frame and the request's
/// sequence number (repeated requests keep their number, so the source can ignore duplicates).
public struct RTCPFIREntry: Sendable, Hashable, Codable {
    /// The media source that should send a decoder refresh point.
    public var ssrc: UInt32
    /// The command sequence number, incremented for each new request.
    public var sequenceNumber: UInt8

    /// Creates an entry.
    public init(ssrc: UInt32, sequenceNumber: UInt8) {
        self.ssrc = ssrc
        self.sequenceNumber = sequenceNumber
    }
}

/// One generic NACK entry (RFC 4585 §6.2.1): a lost packet ID and a bitmask of the 16 following losses.
public struct RTCPNACKEntry: Sendable, Hashable, Codable {
    /// The sequence number of a lost packet (PID).
    public var packetID: UInt16
    /// Bit i set means packet `packetID + i + 1` is lost too (BLP).
    public var lostBitmask: UInt16

    /// Creates an entry.
    public init(packetID: UInt16, lostBitmask: UInt16) {
        self.packetID = packetID
        self.lostBitmask = lostBitmask
    }

    /// The lost sequence numbers this entry names, in order.
    public var sequenceNumbers: [UInt16] {
        var numbers = [packetID]
        for bit in 0..<16 where lostBitmask & (1 << bit) != 0 {
            numbers.append(packetID &+ UInt16(bit) &+ 1)
        }
        return numbers
    }

    /// The fewest entries naming every sequence number in `lost` (taken in the order given, wrap-aware).
    public static func entries(for lost: [UInt16]) -> [RTCPNACKEntry] {
        var entries: [RTCPNACKEntry] = []
        for number in lost {
            if var last = entries.last {
                let offset = number &- last.packetID
                if offset >= 1 && offset <= 16 {
                    last.lostBitmask |= 1 << (offset - 1)
                    entries[entries.count - 1] = last
                    continue
                }
                if offset == 0 { continue }
            }
            entries.append(RTCPNACKEntry(packetID: number, lostBitmask: 0))
        }
        return entries
    }
}

/// One TMMBR or TMMBN entry (RFC 5104 §4.2.1): a maximum bitrate as mantissa × 2^exponent and the per-packet overhead
/// it was measured with.
public struct RTCPTMMBEntry: Sendable, Hashable, Codable {
    /// The media source the limit applies to.
    public var ssrc: UInt32
    /// The exponent (6 bits).
    public var exponent: UInt8
    /// The mantissa (17 bits).
    public var mantissa: UInt32
    /// The measured per-packet overhead in bytes (9 bits).
    public var measuredOverhead: UInt16

    /// Creates an entry from its wire fields (masked to their widths when serialized).
    public init(ssrc: UInt32, exponent: UInt8, mantissa: UInt32, measuredOverhead: UInt16) {
        self.ssrc = ssrc
        self.exponent = exponent
        self.mantissa = mantissa
        self.measuredOverhead = measuredOverhead
    }

    /// Creates an entry for `bitrate` bits per second, choosing the smallest exponent that fits the mantissa.
    public init(ssrc: UInt32, bitrate: UInt64, measuredOverhead: UInt16) {
        let (exponent, mantissa) = splitBitrate(bitrate, mantissaBits: 17)
        self.init(ssrc: ssrc, exponent: exponent, mantissa: mantissa, measuredOverhead: measuredOverhead)
    }

    /// The bitrate in bits per second.
    public var bitrate: UInt64 { joinBitrate(exponent: exponent, mantissa: mantissa) }
}

/// A Receiver Estimated Maximum Bitrate message (draft-alvestrand-rmcat-remb): a PSFB application-layer feedback
/// message with the "REMB" identifier.
public struct RTCPREMB: Sendable, Hashable, Codable {
    /// The SSRC of the packet sender.
    public var senderSSRC: UInt32
    /// The bitrate exponent (6 bits).
    public var exponent: UInt8
    /// The bitrate mantissa (18 bits).
    public var mantissa: UInt32
    /// The media sources the estimate applies to (at most 255 are serialized).
    public var ssrcs: [UInt32]

    /// Creates a REMB from its wire fields.
    public init(senderSSRC: UInt32, exponent: UInt8, mantissa: UInt32, ssrcs: [UInt32]) {
        self.senderSSRC = senderSSRC
        self.exponent = exponent
        self.mantissa = mantissa
        self.ssrcs = ssrcs
    }

    /// Creates a REMB for `bitrate` bits per second (rounded down to what 18 bits of mantissa can say).
    public init(senderSSRC: UInt32, bitrate: UInt64, ssrcs: [UInt32]) {
        let (exponent, mantissa) = splitBitrate(bitrate, mantissaBits: 18)
        self.init(senderSSRC: senderSSRC, exponent: exponent, mantissa: mantissa, ssrcs: ssrcs)
    }

    /// The estimated bitrate in bits per second.
    public var bitrate: UInt64 { joinBitrate(exponent: exponent, mantissa: mantissa) }
}

/// Splits a bitrate into the smallest exponent whose mantissa fits `mantissaBits`.
func splitBitrate(_ bitrate: UInt64, mantissaBits: Int) -> (UInt8, UInt32) {
    var exponent: UInt8 = 0
    var mantissa = bitrate
    while mantissa >= 1 << mantissaBits {
        mantissa >>= 1
        exponent += 1
    }
    return (exponent, UInt32(mantissa))
}

/// mantissa × 2^exponent, saturating at `UInt64.max`.
func joinBitrate(exponent: UInt8, mantissa: UInt32) -> UInt64 {
    let value = UInt64(mantissa)
    guard exponent < 64, value.leadingZeroBitCount >= Int(exponent) else { return value == 0 ? 0 : .max }
    return value << exponent
}
