public import CaptureCore

/// Splits encoded VP8 frames into RTP packets (RFC 7741), reusing one buffer for every packet.
///
/// Each frame gets one RTP timestamp and the next 15-bit picture ID; its first packet has the S bit, every packet
/// PartID 0, the N bit when the frame is droppable and, in a temporally layered stream, TID, Y and TL0PICIDX; the last
/// one the marker bit and, when configured, the CVO video-orientation extension (3GPP TS 26.114; WebRTC also sends it
/// on the last packet). Payload sizes are balanced the way WebRTC's `RtpPacketizer::SplitAboutEqually` balances them:
/// the whole packets of a frame (extensions included) differ by at most one byte. Nothing is allocated per frame or
/// per packet.
///
/// ## Header extensions
/// One RFC 8285 one-byte block, its elements in this order, each when configured:
/// 1. `sdes:mid` (RFC 8843), which BUNDLE receivers route by;
/// 2. `sdes:rtp-stream-id` (RFC 8852 §3.1, ``RTPStreamIDExtension``), the simulcast layer's `a=rid`;
///    ``RTXPacket`` turns it into `repaired-rtp-stream-id` on retransmissions;
/// 3. the transport-wide sequence number (``TransportSequenceNumberExtension``) on every packet, written 0 here (its
///    sender numbers it as the packet leaves, at ``OutgoingRTPPacket/transportSequenceNumberOffset``);
/// 4. CVO on the last packet of a frame.
/// The block is zero-padded to 32 bits.
///
/// The mid and rid are on every packet until ``stopSendingStreamIdentifiers()``: a receiver needs them only until it
/// has bound the SSRC to its mid and rid, which its first report block naming the SSRC shows (libwebrtc's
/// `RTPSender` stops them then too, unless told to always send them). From then on each packet is smaller by them,
/// and carries more payload.
///
/// Not thread-safe: use one packetizer from one thread (the encoder's).
public final class VP8Packetizer {
    /// The configuration (``RTPPacketizerConfiguration/maxPacketSize`` raised to the minimum if it was smaller).
    public let configuration: RTPPacketizerConfiguration
    /// What has been produced so far.
    public private(set) var statistics = VP8PacketizerStatistics()
    /// The sequence number the next packet will carry.
    public private(set) var nextSequenceNumber: UInt16
    /// The picture ID the next frame will carry.
    public private(set) var nextPictureID: UInt16
    /// The RTP timestamp of the last frame packetized (0 before the first): what padding packets carry.
    public private(set) var lastRTPTimestamp: UInt32 = 0
    /// The TL0PICIDX of the last base-layer frame (RFC 7741): each frame of temporal layer 0 increments it, and every
    /// frame of a layered stream carries it.
    public private(set) var tl0PictureIndex: UInt8 = 0

    /// Whether packets carry the mid and rid elements (when configured): until ``stopSendingStreamIdentifiers()``.
    public private(set) var sendsStreamIdentifiers = true

    /// The reused packet buffer.
    private let buffer: UnsafeMutableRawBufferPointer
    /// The mid extension's bytes (empty when not sent).
    private let midBytes: [UInt8]
    /// The rid extension's bytes (empty when not sent).
    private let ridBytes: [UInt8]
    /// The one-byte-header elements every packet carries (the mid, rid and transport-wide sequence number elements),
    /// in bytes.
    private var everyPacketElements: Int
    /// Where the transport-wide sequence number's data bytes sit in every packet, when it is sent.
    private var transportSequenceNumberOffset: Int?
    /// Bytes of elements kept free in every packet's budget, though not sent (``stopSendingStreamIdentifiers(reservingRoom:)``).
    private var reservedElements = 0

    /// Creates a packetizer.
    public init(configuration: RTPPacketizerConfiguration) {
        var configuration = configuration
        configuration.maxPacketSize = max(configuration.maxPacketSize, RTPPacketizerConfiguration.minimumPacketSize)
        configuration.trailerCapacity = max(configuration.trailerCapacity, 0)
        if let id = configuration.videoOrientationExtensionID, !(1...14).contains(id) {
            configuration.videoOrientationExtensionID = nil
        }
        if let id = configuration.transportSequenceNumberExtensionID, !(1...14).contains(id) {
            configuration.transportSequenceNumberExtensionID = nil
        }
        let mid = Array(configuration.mid.utf8)
        if let id = configuration.midExtensionID, !(1...14).contains(id) || mid.isEmpty || mid.count > 16 {
            configuration.midExtensionID = nil
        }
        midBytes = configuration.midExtensionID == nil ? [] : mid
        if let id = configuration.ridExtensionID,
            !(1...14).contains(id) || !RTPStreamIDExtension.isValid(configuration.rid)
        {
            configuration.ridExtensionID = nil
        }
        if let id = configuration.repairedRidExtensionID,
            !(1...14).contains(id) || configuration.ridExtensionID == nil || id == configuration.ridExtensionID
        {
            configuration.repairedRidExtensionID = nil
        }
        ridBytes = configuration.ridExtensionID == nil ? [] : Array(configuration.rid.utf8)
        (everyPacketElements, transportSequenceNumberOffset) = Self.layout(
            midBytes: midBytes.count, ridBytes: ridBytes.count,
            transportWide: configuration.transportSequenceNumberExtensionID != nil)
        self.configuration = configuration
        nextSequenceNumber = configuration.initialSequenceNumber
        nextPictureID = configuration.initialPictureID & 0x7FFF
        buffer = .allocate(
            byteCount: configuration.maxPacketSize + configuration.trailerCapacity, alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
    }

    deinit {
        buffer.deallocate()
    }

    /// The bytes of the elements every packet carries, and where the transport-wide number's data sits, for mid and
    /// rid data of these lengths (0: not sent).
    private static func layout(midBytes: Int, ridBytes: Int, transportWide: Bool) -> (elements: Int, offset: Int?) {
        let midElement = midBytes == 0 ? 0 : 1 + midBytes
        let ridElement = ridBytes == 0 ? 0 : 1 + ridBytes
        // The fixed header, the extension block's 4-byte header, the mid and rid elements, then this element's ID
        // byte.
        return (
            midElement + ridElement + (transportWide ? TransportSequenceNumberExtension.oneByteElementSize : 0),
            transportWide ? RTPHeader.fixedSize + 4 + midElement + ridElement + 1 : nil
        )
    }

    /// Leaves the mid and rid out of every packet from the next frame on (for good): call it once the receiver has
    /// shown it knows the SSRC (a report block naming it). The configuration still holds both ids: ``RTXPacket``
    /// relabels the rid of packets sent before, and the caller adds the identifiers to retransmissions and padding
    /// while the RTX SSRC is not yet known. Idempotent.
    ///
    /// - Parameter reservingRoom: Bytes of elements to keep out of the payload budget all the same (the identifiers
    ///   an RTX copy gets appended while the peer does not know the RTX SSRC, so that the copy is no larger than
    ///   before; libwebrtc's `RTPSender` keeps the room until the RTX SSRC is acknowledged too), until
    ///   ``releaseReservedRoom()``; 0 gives the bytes saved to the payload at once.
    public func stopSendingStreamIdentifiers(reservingRoom: Int = 0) {
        guard sendsStreamIdentifiers else { return }
        sendsStreamIdentifiers = false
        (everyPacketElements, transportSequenceNumberOffset) = Self.layout(
            midBytes: 0, ridBytes: 0, transportWide: configuration.transportSequenceNumberExtensionID != nil)
        reservedElements = max(0, reservingRoom)
    }

    /// Gives the room kept by ``stopSendingStreamIdentifiers(reservingRoom:)`` to the payload, from the next frame on.
    public func releaseReservedRoom() {
        reservedElements = 0
    }

    /// Packetizes one encoded frame, calling `emit` for each packet in order. An empty frame emits nothing.
    ///
    /// - Parameters:
    ///   - frame: The encoded VP8 frame.
    ///   - rtpTimestamp: The frame's 90 kHz RTP timestamp.
    ///   - isKeyFrame: Whether the frame is a key frame (informational; the receiver reads the bitstream).
    ///   - isDroppable: Whether no other frame references this one (sets the N bit).
    ///   - rotation: The frame's rotation, sent in the CVO extension when configured.
    ///   - temporalLayerIndex: The frame's temporal layer (TID, 0…3) in a layered stream, or `nil` (no TID, Y or
    ///     TL0PICIDX written).
    ///   - isLayerSync: The Y bit: the frame depends only on base-layer frames.
    ///   - emit: Receives each packet; its buffer is valid only during the call. An error stops packetization
    ///     (the remaining packets' sequence numbers are not used).
    public func packetize<E: Error>(
        _ frame: UnsafeRawBufferPointer, rtpTimestamp: UInt32, isKeyFrame: Bool, isDroppable: Bool,
        rotation: VideoRotation, temporalLayerIndex: UInt8? = nil, isLayerSync: Bool = false,
        emit: (inout OutgoingRTPPacket) throws(E) -> Void
    ) throws(E) {
        guard frame.count > 0 else { return }
        let pictureID = nextPictureID
        nextPictureID = (nextPictureID &+ 1) & 0x7FFF
        lastRTPTimestamp = rtpTimestamp
        let temporalIndex = temporalLayerIndex.map { min($0, 3) }
        if temporalIndex == 0 { tl0PictureIndex &+= 1 }
        // The frame's descriptor (the S bit set per packet): a 15-bit picture ID, and TL0PICIDX, TID and Y in a
        // layered stream.
        var descriptor = VP8PayloadDescriptor(
            isNonReference: isDroppable, isStartOfPartition: true, partitionID: 0, pictureID: pictureID,
            pictureIDIsLong: true, tl0PictureIndex: temporalIndex == nil ? nil : tl0PictureIndex,
            temporalLayerIndex: temporalIndex, isLayerSync: temporalIndex != nil && isLayerSync)
        statistics.frames += 1
        let extensionID = configuration.videoOrientationExtensionID
        let everyPacketBlock = Self.extensionBlockSize(elements: everyPacketElements)
        let lastBlock = Self.extensionBlockSize(elements: everyPacketElements + (extensionID == nil ? 0 : 2))
        let lastReduction = lastBlock - everyPacketBlock
        // Room kept for elements an RTX copy may get back: what they would add to the block.
        let reserved =
            reservedElements == 0
            ? 0 : Self.extensionBlockSize(elements: everyPacketElements + reservedElements) - everyPacketBlock
        let maxPayload =
            configuration.maxPacketSize - RTPHeader.fixedSize - descriptor.encodedSize - everyPacketBlock - reserved
        var split = BalancedSplit(
            payloadLength: frame.count, maxPayload: maxPayload, lastPacketReduction: lastReduction)
        var offset = 0
        var isFirst = true
        while let size = split.next() {
            let isLast = offset + size == frame.count
            let orientationID = isLast ? extensionID : nil
            var length = writeHeader(
                marker: isLast, timestamp: rtpTimestamp, orientationID: orientationID, rotation: rotation)
            descriptor.isStartOfPartition = isFirst
            length += descriptor.write(to: UnsafeMutableRawBufferPointer(rebasing: buffer[length...]))
            let overhead = length
            UnsafeMutableRawBufferPointer(rebasing: buffer[length..<length + size])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: frame[offset..<offset + size]))
            length += size
            offset += size
            var packet = OutgoingRTPPacket(
                buffer: buffer, length: length, sequenceNumber: nextSequenceNumber, rtpTimestamp: rtpTimestamp,
                isFirstPacketOfFrame: isFirst, isLastPacketOfFrame: isLast,
                transportSequenceNumberOffset: transportSequenceNumberOffset)
            nextSequenceNumber &+= 1
            statistics.packets += 1
            statistics.payloadBytes += size
            statistics.overheadBytes += overhead
            isFirst = false
            try emit(&packet)
        }
    }

    /// The size of an RFC 8285 one-byte-header extension block holding `elements` bytes of elements: the 4-byte
    /// extension header and the elements padded to 32-bit words; 0 when there are none.
    private static func extensionBlockSize(elements: Int) -> Int {
        elements == 0 ? 0 : 4 + (elements + 3) / 4 * 4
    }

    /// Writes the RTP header and its extensions (mid and rid while they are sent, the transport-wide sequence number,
    /// 0 for now, on every packet, CVO when `orientationID` is set); returns its size.
    private func writeHeader(marker: Bool, timestamp: UInt32, orientationID: UInt8?, rotation: VideoRotation) -> Int {
        let elements = everyPacketElements + (orientationID == nil ? 0 : 2)
        buffer[0] = 0x80 | (elements == 0 ? 0 : 0x10)
        buffer[1] = (marker ? 0x80 : 0) | (configuration.payloadType & 0x7F)
        buffer.rtpStore(nextSequenceNumber, at: 2)
        buffer.rtpStore(timestamp, at: 4)
        buffer.rtpStore(configuration.ssrc, at: 8)
        guard elements > 0 else { return RTPHeader.fixedSize }
        let blockSize = Self.extensionBlockSize(elements: elements)
        buffer.rtpStore(RTPHeaderExtensionForm.oneByteProfile, at: 12)
        buffer.rtpStore(UInt16((blockSize - 4) / 4), at: 14)
        var offset = 16
        if let midID = configuration.midExtensionID, !midBytes.isEmpty, sendsStreamIdentifiers {
            buffer[offset] = midID << 4 | UInt8(midBytes.count - 1)
            midBytes.withUnsafeBytes { mid in
                UnsafeMutableRawBufferPointer(rebasing: buffer[offset + 1..<offset + 1 + mid.count]).copyMemory(
                    from: mid)
            }
            offset += 1 + midBytes.count
        }
        if let ridID = configuration.ridExtensionID, !ridBytes.isEmpty, sendsStreamIdentifiers {
            buffer[offset] = ridID << 4 | UInt8(ridBytes.count - 1)
            ridBytes.withUnsafeBytes { rid in
                UnsafeMutableRawBufferPointer(rebasing: buffer[offset + 1..<offset + 1 + rid.count]).copyMemory(
                    from: rid)
            }
            offset += 1 + ridBytes.count
        }
        if let id = configuration.transportSequenceNumberExtensionID {
            offset += TransportSequenceNumberExtension.writeOneByteElement(
                id: id, sequenceNumber: 0, into: buffer, at: offset)
        }
        if let orientationID {
            buffer[offset] = orientationID << 4  // length - 1 = 0: one data byte
            buffer[offset + 1] = VideoOrientationExtension.byte(for: rotation)
            offset += 2
        }
        while offset < RTPHeader.fixedSize + blockSize {
            buffer[offset] = 0
            offset += 1
        }
        return RTPHeader.fixedSize + blockSize
    }
}

/// Payload sizes for one frame, balanced like WebRTC's `SplitAboutEqually`: the last packet's reduction (the CVO
/// extension) is counted as payload so that whole packets come out within one byte of each other.
struct BalancedSplit {
    private var remaining: Int
    private var packetsLeft: Int
    private var bytesPerPacket: Int
    private let largerPackets: Int
    private let lastPacketReduction: Int

    /// Prepares the split of `payloadLength` bytes into packets carrying at most `maxPayload` bytes each, the last
    /// one at most `maxPayload - lastPacketReduction`.
    init(payloadLength: Int, maxPayload: Int, lastPacketReduction: Int) {
        remaining = payloadLength
        self.lastPacketReduction = lastPacketReduction
        let total = payloadLength + lastPacketReduction
        let count = max(1, (total + maxPayload - 1) / maxPayload)
        packetsLeft = count
        bytesPerPacket = total / count
        largerPackets = total % count
    }

    /// The next packet's payload size, or `nil` when the frame is done.
    mutating func next() -> Int? {
        guard remaining > 0 else { return nil }
        // The last `largerPackets` packets carry one byte more than the others.
        if packetsLeft == largerPackets { bytesPerPacket += 1 }
        var size = packetsLeft == 1 ? remaining : min(bytesPerPacket, remaining - 1)
        size = max(size, 1)
        remaining -= size
        packetsLeft -= 1
        return size
    }
}
