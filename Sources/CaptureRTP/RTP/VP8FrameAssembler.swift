internal import CaptureCore

/// Reassembles VP8 frames from RTP packets (RFC 7741) that may arrive reordered, duplicated or not at all.
///
/// A frame is its packets from one with the S bit and PartID 0 to the one with the marker bit, with consecutive
/// sequence numbers (unwrapped to 64 bits) and one RTP timestamp. Frames are emitted in order. A sequence gap is
/// waited for until the packets after it are ``RTPReceiverConfiguration/reorderWindow`` packets ahead or have waited
/// ``RTPReceiverConfiguration/maxReorderDelay``; then the frame is dropped, and the assembler emits no more frames
/// until a complete key frame arrives, asking for one with ``Event/keyFrameNeeded`` (at most once per
/// ``RTPReceiverConfiguration/keyFrameRequestInterval``). The stream starts in that waiting state, so the first
/// frame emitted is a key frame. Malformed packets are counted and ignored.
///
/// Not thread-safe: feed one assembler from one thread (the receive loop). Allocates per packet and per frame.
public final class VP8FrameAssembler {
    /// Something the assembler reports.
    public enum Event: Sendable, Hashable {
        /// A complete frame, in order.
        case frame(AssembledFrame)
        /// A frame was given up.
        case frameDropped(AssembledFrameDropReason)
        /// Frames cannot be decoded until a key frame arrives: the session should send a PLI.
        case keyFrameNeeded
    }

    /// The configuration.
    public let configuration: RTPReceiverConfiguration
    /// What has been seen so far.
    public var statistics: VP8ReceiverStatistics {
        var result = counters
        result.lost = lostBefore + max(0, expectedInStream - receivedInStream)
        return result
    }

    private struct StoredPacket {
        var sequenceNumber: UInt16
        var timestamp: UInt32
        var marker: Bool
        var isFrameStart: Bool
        var pictureID: UInt16?
        var temporalLayerIndex: UInt8?
        var isLayerSync: Bool
        var tl0PictureIndex: UInt8?
        var rotation: VideoRotation?
        var arrivalTimeNs: UInt64
        var payload: [UInt8]
    }

    private enum Scan {
        case complete(end: Int64)
        case incomplete(missing: Int64)
        case inconsistent(end: Int64)
    }

    private static let recentCapacity = 1024
    private var counters = VP8ReceiverStatistics()
    private var packets: [Int64: StoredPacket] = [:]
    private var unwrapper = SequenceNumberUnwrapper()
    private var ssrc: UInt32?
    /// The first sequence number of the next frame, when the stream is continuous (`nil` while waiting for a key
    /// frame).
    private var nextExpected: Int64?
    /// Packets up to this sequence number were emitted or discarded.
    private var consumedThrough: Int64?
    private var lowest: Int64 = 0
    private var highest: Int64?
    private var receivedInStream = 0
    private var lostBefore = 0
    private var recent: [Int64]
    private var lastKeyFrameRequestNs: UInt64?

    private var expectedInStream: Int {
        guard let highest else { return 0 }
        return Int(highest - lowest + 1)
    }

    /// Creates an assembler.
    public init(configuration: RTPReceiverConfiguration = RTPReceiverConfiguration()) {
        var configuration = configuration
        configuration.reorderWindow = min(max(configuration.reorderWindow, 1), Self.recentCapacity / 2)
        self.configuration = configuration
        recent = Array(repeating: .min, count: Self.recentCapacity)
    }

    /// Feeds one received packet; returns what it completed, dropped or requires, in order.
    ///
    /// - Parameters:
    ///   - packet: The RTP packet's bytes (already unprotected if SRTP is used).
    ///   - arrivalTimeNs: When it arrived, on a monotonic nanosecond clock.
    public func insert(_ packet: UnsafeRawBufferPointer, arrivalTimeNs: UInt64) -> [Event] {
        let parsed: RTPPacket
        let descriptor: VP8PayloadDescriptor
        let descriptorSize: Int
        do {
            parsed = try RTPPacket(parsing: packet)
            guard parsed.header.payloadType == configuration.payloadType else {
                counters.wrongPayloadType += 1
                return []
            }
            (descriptor, descriptorSize) = try VP8PayloadDescriptor.parse(
                UnsafeRawBufferPointer(rebasing: packet[parsed.payloadRange]))
        } catch {
            counters.malformed += 1
            return []
        }
        let header = parsed.header
        if ssrc != header.ssrc {
            if ssrc != nil { resetStream() }
            ssrc = header.ssrc
        }
        let sequence = unwrapper.unwrap(header.sequenceNumber)
        let slot = Int(UInt64(bitPattern: sequence) % UInt64(Self.recentCapacity))
        if recent[slot] == sequence {
            counters.duplicates += 1
            return []
        }
        recent[slot] = sequence
        receivedInStream += 1
        if let highest {
            if sequence < highest { counters.reordered += 1 }
            self.highest = max(highest, sequence)
            lowest = min(lowest, sequence)
        } else {
            highest = sequence
            lowest = sequence
        }
        if let consumedThrough, sequence <= consumedThrough {
            counters.late += 1
            return []
        }
        counters.packetsReceived += 1
        var rotation: VideoRotation?
        if let id = configuration.videoOrientationExtensionID, let byte = parsed.extensionElement(id: id)?.data.first {
            rotation = VideoOrientationExtension.rotation(from: byte)
        }
        let start = parsed.payloadRange.lowerBound + descriptorSize
        packets[sequence] = StoredPacket(
            sequenceNumber: header.sequenceNumber, timestamp: header.timestamp, marker: header.marker,
            isFrameStart: descriptor.isStartOfPartition && descriptor.partitionID == 0, pictureID: descriptor.pictureID,
            temporalLayerIndex: descriptor.temporalLayerIndex, isLayerSync: descriptor.isLayerSync,
            tl0PictureIndex: descriptor.tl0PictureIndex, rotation: rotation, arrivalTimeNs: arrivalTimeNs,
            payload: Array(packet[start..<parsed.payloadRange.upperBound]))
        var events: [Event] = []
        process(now: arrivalTimeNs, into: &events)
        return events
    }

    /// Emits what the buffered packets allow.
    private func process(now: UInt64, into events: inout [Event]) {
        while true {
            if let next = nextExpected {
                switch scanFrame(from: next) {
                case .complete(let end):
                    events.append(.frame(takeFrame(from: next, through: end)))
                    continue
                case .inconsistent(let end):
                    discard(through: end)
                    drop(.inconsistent, into: &events)
                    enterWaiting(now: now, into: &events)
                    continue
                case .incomplete(let missing):
                    guard gapIsSettled(missing: missing, now: now) else { return }
                    let nextStart = packets.keys.filter { $0 > missing && packets[$0]?.isFrameStart == true }.min()
                    let timestamps = discard(through: (nextStart ?? highest ?? missing) - (nextStart == nil ? 0 : 1))
                    for _ in 0..<max(timestamps, 1) { drop(.packetsLost, into: &events) }
                    enterWaiting(now: now, into: &events)
                    continue
                }
            }
            // Waiting for a key frame: jump to the oldest complete one.
            for start in packets.keys.sorted() where packets[start]?.isFrameStart == true {
                guard case .complete(let end) = scanFrame(from: start), let first = packets[start]?.payload.first,
                    first & 0x01 == 0
                else { continue }
                let skipped = discard(through: start - 1)
                for _ in 0..<skipped { drop(.waitingForKeyFrame, into: &events) }
                events.append(.frame(takeFrame(from: start, through: end)))
                break
            }
            if nextExpected != nil { continue }
            // None yet: give up on packets that have waited long enough, and ask for a key frame.
            let settled = packets.filter { isSettled($0.key, arrival: $0.value.arrivalTimeNs, now: now) }.keys
            guard let newest = settled.max() else { return }
            let timestamps = discard(through: newest)
            for _ in 0..<timestamps { drop(.waitingForKeyFrame, into: &events) }
            requestKeyFrame(now: now, into: &events)
            return
        }
    }

    /// Whether packets from `start` form a complete frame.
    private func scanFrame(from start: Int64) -> Scan {
        guard let first = packets[start] else { return .incomplete(missing: start) }
        guard first.isFrameStart else { return .inconsistent(end: start) }
        var sequence = start
        while let packet = packets[sequence] {
            if packet.timestamp != first.timestamp || (sequence != start && packet.isFrameStart) {
                return .inconsistent(end: sequence - 1)
            }
            if packet.marker { return .complete(end: sequence) }
            sequence += 1
        }
        return .incomplete(missing: sequence)
    }

    /// Removes the frame's packets and builds it.
    private func takeFrame(from start: Int64, through end: Int64) -> AssembledFrame {
        var bytes: [UInt8] = []
        var total = 0
        for sequence in start...end { total += packets[sequence]?.payload.count ?? 0 }
        bytes.reserveCapacity(total)
        var rotation: VideoRotation?
        var arrival: UInt64 = 0
        var firstPacket: StoredPacket?
        var lastSequenceNumber: UInt16 = 0
        for sequence in start...end {
            guard let packet = packets.removeValue(forKey: sequence) else { continue }
            if firstPacket == nil { firstPacket = packet }
            bytes.append(contentsOf: packet.payload)
            rotation = packet.rotation ?? rotation
            arrival = max(arrival, packet.arrivalTimeNs)
            lastSequenceNumber = packet.sequenceNumber
        }
        consumedThrough = max(consumedThrough ?? end, end)
        nextExpected = end + 1
        counters.framesComplete += 1
        var frame = AssembledFrame(
            bytes: bytes, rtpTimestamp: firstPacket?.timestamp ?? 0, isKeyFrame: (bytes.first ?? 1) & 0x01 == 0,
            rotation: rotation ?? .degrees0, pictureID: firstPacket?.pictureID, ssrc: ssrc ?? 0,
            firstSequenceNumber: firstPacket?.sequenceNumber ?? 0, lastSequenceNumber: lastSequenceNumber,
            packetCount: Int(end - start + 1), arrivalTimeNs: arrival)
        frame.temporalLayerIndex = firstPacket?.temporalLayerIndex
        frame.isLayerSync = firstPacket?.isLayerSync ?? false
        frame.tl0PictureIndex = firstPacket?.tl0PictureIndex
        return frame
    }

    /// Removes every buffered packet up to `end`; returns how many distinct frames (timestamps) they belonged to.
    @discardableResult
    private func discard(through end: Int64) -> Int {
        var timestamps = Set<UInt32>()
        for sequence in packets.keys where sequence <= end {
            if let packet = packets.removeValue(forKey: sequence) { timestamps.insert(packet.timestamp) }
        }
        consumedThrough = max(consumedThrough ?? end, end)
        return timestamps.count
    }

    /// Whether a gap at `missing` has outlasted the reorder window or delay.
    private func gapIsSettled(missing: Int64, now: UInt64) -> Bool {
        var oldestArrival: UInt64?
        for (sequence, packet) in packets where sequence > missing {
            oldestArrival = min(oldestArrival ?? packet.arrivalTimeNs, packet.arrivalTimeNs)
        }
        guard let oldestArrival else { return false }
        return isSettled(missing, arrival: oldestArrival, now: now)
    }

    private func isSettled(_ sequence: Int64, arrival: UInt64, now: UInt64) -> Bool {
        (highest ?? sequence) - sequence >= Int64(configuration.reorderWindow)
            || MonotonicClock.elapsedNs(from: arrival, to: now) >= configuration.maxReorderDelay.clampedNanoseconds
    }

    private func drop(_ reason: AssembledFrameDropReason, into events: inout [Event]) {
        counters.framesDropped += 1
        events.append(.frameDropped(reason))
    }

    private func enterWaiting(now: UInt64, into events: inout [Event]) {
        nextExpected = nil
        requestKeyFrame(now: now, into: &events)
    }

    private func requestKeyFrame(now: UInt64, into events: inout [Event]) {
        if let last = lastKeyFrameRequestNs,
            MonotonicClock.elapsedNs(from: last, to: now) < configuration.keyFrameRequestInterval.clampedNanoseconds
        {
            return
        }
        lastKeyFrameRequestNs = now
        counters.keyFrameRequests += 1
        events.append(.keyFrameNeeded)
    }

    /// A new SSRC: forget the old stream (its loss is kept in the statistics).
    private func resetStream() {
        lostBefore += max(0, expectedInStream - receivedInStream)
        packets = [:]
        unwrapper = SequenceNumberUnwrapper()
        nextExpected = nil
        consumedThrough = nil
        highest = nil
        receivedInStream = 0
        for index in recent.indices { recent[index] = .min }
    }
}
