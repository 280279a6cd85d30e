/// The VP8 payload descriptor that starts every VP8 RTP payload (RFC 7741 §4.2).
///
/// The X bit is implied: it is written when any of the extension fields (PictureID, TL0PICIDX, TID, KEYIDX) is set.
public struct VP8PayloadDescriptor: Sendable, Hashable, Codable {
    /// N: the frame can be discarded without affecting any other frame.
    public var isNonReference: Bool
    /// S: the packet starts a VP8 partition.
    public var isStartOfPartition: Bool
    /// PartID: the partition index (0...7) the packet's first byte belongs to.
    public var partitionID: UInt8
    /// I: the picture ID (7 or 15 bits), if present.
    public var pictureID: UInt16?
    /// M: whether the picture ID is written in its 15-bit form (forced when the value exceeds 127).
    public var pictureIDIsLong: Bool
    /// L: TL0PICIDX, the running index of temporal-base-layer frames.
    public var tl0PictureIndex: UInt8?
    /// T: TID, the temporal layer index (0...3).
    public var temporalLayerIndex: UInt8?
    /// Y: the frame is a layer sync point (only written with a temporal layer index).
    public var isLayerSync: Bool
    /// K: KEYIDX, the running index of key frames (0...31).
    public var keyIndex: UInt8?

    /// Creates a descriptor.
    public init(
        isNonReference: Bool = false, isStartOfPartition: Bool, partitionID: UInt8 = 0, pictureID: UInt16? = nil,
        pictureIDIsLong: Bool = false, tl0PictureIndex: UInt8? = nil, temporalLayerIndex: UInt8? = nil,
        isLayerSync: Bool = false, keyIndex: UInt8? = nil
    ) {
        self.isNonReference = isNonReference
        self.isStartOfPartition = isStartOfPartition
        self.partitionID = partitionID
        self.pictureID = pictureID
        self.pictureIDIsLong = pictureIDIsLong
        self.tl0PictureIndex = tl0PictureIndex
        self.temporalLayerIndex = temporalLayerIndex
        self.isLayerSync = isLayerSync
        self.keyIndex = keyIndex
    }

    /// Whether the X byte is present.
    private var hasExtension: Bool {
        pictureID != nil || tl0PictureIndex != nil || temporalLayerIndex != nil || keyIndex != nil
    }

    /// Whether the picture ID takes two bytes.
    private var writesLongPictureID: Bool {
        guard let pictureID else { return false }
        return pictureIDIsLong || pictureID > 0x7F
    }

    /// The number of bytes ``write(to:)`` writes.
    public var encodedSize: Int {
        guard hasExtension else { return 1 }
        var size = 2
        if pictureID != nil { size += writesLongPictureID ? 2 : 1 }
        if tl0PictureIndex != nil { size += 1 }
        if temporalLayerIndex != nil || keyIndex != nil { size += 1 }
        return size
    }

    /// Writes the descriptor at the start of `buffer` and returns the number of bytes written, or 0 when `buffer` is
    /// shorter than ``encodedSize``. Values wider than their fields are truncated to the field.
    @discardableResult
    public func write(to buffer: UnsafeMutableRawBufferPointer) -> Int {
        let size = encodedSize
        guard buffer.count >= size else { return 0 }
        let extensionFlag: UInt8 = hasExtension ? 0x80 : 0
        buffer[0] =
            extensionFlag | (isNonReference ? 0x20 : 0) | (isStartOfPartition ? 0x10 : 0) | (partitionID & 0x07)
        guard hasExtension else { return 1 }
        let hasTOrK = temporalLayerIndex != nil || keyIndex != nil
        buffer[1] =
            (pictureID != nil ? 0x80 : 0) | (tl0PictureIndex != nil ? 0x40 : 0)
            | (temporalLayerIndex != nil ? 0x20 : 0) | (keyIndex != nil ? 0x10 : 0)
        var offset = 2
        if let pictureID {
            if writesLongPictureID {
                buffer[offset] = 0x80 | UInt8(truncatingIfNeeded: pictureID >> 8) & 0x7F
                buffer[offset + 1] = UInt8(truncatingIfNeeded: pictureID)
                offset += 2
            } else {
                buffer[offset] = UInt8(truncatingIfNeeded: pictureID) & 0x7F
                offset += 1
            }
        }
        if let tl0PictureIndex {
            buffer[offset] = tl0PictureIndex
            offset += 1
        }
        if hasTOrK {
            let tid = (temporalLayerIndex ?? 0) & 0x03
            buffer[offset] = tid << 6 | (isLayerSync ? 0x20 : 0) | ((keyIndex ?? 0) & 0x1F)
            offset += 1
        }
        return offset
    }

    /// Parses the descriptor at the start of `payload`; returns it and its size in bytes. Throws when the descriptor
    /// is cut short or leaves no VP8 data after it.
    public static func parse(
        _ payload: UnsafeRawBufferPointer
    ) throws(RTPParseError) -> (descriptor: VP8PayloadDescriptor, size: Int) {
        let length = payload.count
        guard length >= 1 else { throw .truncatedPayloadDescriptor(length: length) }
        let first = payload[0]
        var descriptor = VP8PayloadDescriptor(
            isNonReference: first & 0x20 != 0, isStartOfPartition: first & 0x10 != 0, partitionID: first & 0x07,
            pictureIDIsLong: false)
        var offset = 1
        if first & 0x80 != 0 {
            guard length > offset else { throw .truncatedPayloadDescriptor(length: length) }
            let flags = payload[offset]
            offset += 1
            if flags & 0x80 != 0 {
                guard length > offset else { throw .truncatedPayloadDescriptor(length: length) }
                if payload[offset] & 0x80 != 0 {
                    guard length > offset + 1 else { throw .truncatedPayloadDescriptor(length: length) }
                    descriptor.pictureID = UInt16(payload[offset] & 0x7F) << 8 | UInt16(payload[offset + 1])
                    descriptor.pictureIDIsLong = true
                    offset += 2
                } else {
                    descriptor.pictureID = UInt16(payload[offset])
                    offset += 1
                }
            }
            if flags & 0x40 != 0 {
                guard length > offset else { throw .truncatedPayloadDescriptor(length: length) }
                descriptor.tl0PictureIndex = payload[offset]
                offset += 1
            }
            if flags & 0x30 != 0 {
                guard length > offset else { throw .truncatedPayloadDescriptor(length: length) }
                let byte = payload[offset]
                if flags & 0x20 != 0 {
                    descriptor.temporalLayerIndex = byte >> 6
                    descriptor.isLayerSync = byte & 0x20 != 0
                }
                if flags & 0x10 != 0 { descriptor.keyIndex = byte & 0x1F }
                offset += 1
            }
        }
        guard length > offset else { throw .truncatedPayloadDescriptor(length: length) }
        return (descriptor, offset)
    }
}
