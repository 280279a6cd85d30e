import CaptureCore
import CaptureTestSupport
import Testing

@testable import CaptureRTP

@Suite("VP8 frame assembler")
struct RTPAssemblerTests {
    struct SentFrame {
        var bytes: [UInt8]
        var timestamp: UInt32
        var key: Bool
        var packets: [CapturedPacket]
    }

    /// Packetizes frames of `sizes`; `keys` marks the key frames.
    static func stream(
        sizes: [Int], keys: Set<Int>, initialSequenceNumber: UInt16 = 1000, orientationID: UInt8? = nil,
        rotation: VideoRotation = .degrees0
    ) -> [SentFrame] {
        let packetizer = VP8Packetizer(
            configuration: RTPPacketizerConfiguration(
                ssrc: 42, initialSequenceNumber: initialSequenceNumber, initialPictureID: 10,
                videoOrientationExtensionID: orientationID))
        return sizes.enumerated().map { index, size in
            let key = keys.contains(index)
            let bytes = RTPTestPackets.frame(size: size, key: key, seed: index)
            let timestamp = UInt32(index * 3000)
            let packets = RTPTestPackets.packetize(
                bytes, with: packetizer, timestamp: timestamp, key: key, rotation: rotation)
            return SentFrame(bytes: bytes, timestamp: timestamp, key: key, packets: packets)
        }
    }

    /// Feeds packets with arrival times `stepNs` apart; returns all events.
    static func feed(
        _ packets: [CapturedPacket], to assembler: VP8FrameAssembler, startNs: UInt64 = 1_000_000_000,
        stepNs: UInt64 = 1_000_000
    ) -> [VP8FrameAssembler.Event] {
        var events: [VP8FrameAssembler.Event] = []
        for (index, packet) in packets.enumerated() {
            events += packet.bytes.withUnsafeBytes {
                assembler.insert($0, arrivalTimeNs: startNs + UInt64(index) * stepNs)
            }
        }
        return events
    }

    static func frames(_ events: [VP8FrameAssembler.Event]) -> [AssembledFrame] {
        events.compactMap { if case .frame(let frame) = $0 { frame } else { nil } }
    }

    @Test("in-order packets give back every frame with its metadata")
    func inOrder() {
        let sent = Self.stream(
            sizes: [5000, 1000, 1187, 1, 100_000, 3], keys: [0, 4], orientationID: 4, rotation: .degrees270)
        let assembler = VP8FrameAssembler(configuration: RTPReceiverConfiguration(videoOrientationExtensionID: 4))
        let events = Self.feed(sent.flatMap(\.packets), to: assembler)
        let frames = Self.frames(events)
        #expect(frames.count == events.count)
        #expect(frames.map(\.bytes) == sent.map(\.bytes))
        #expect(frames.map(\.isKeyFrame) == sent.map(\.key))
        #expect(frames.map(\.rtpTimestamp) == sent.map(\.timestamp))
        #expect(frames.map(\.pictureID) == [10, 11, 12, 13, 14, 15])
        #expect(frames.allSatisfy { $0.rotation == .degrees270 && $0.ssrc == 42 })
        #expect(frames.map(\.packetCount) == sent.map(\.packets.count))
        #expect(frames.first?.firstSequenceNumber == 1000)
        #expect(frames.last?.lastSequenceNumber == sent.last?.packets.last?.sequenceNumber)
        let statistics = assembler.statistics
        #expect(statistics.framesComplete == 6)
        #expect(statistics.lost == 0 && statistics.duplicates == 0 && statistics.malformed == 0)
    }

    @Test("shuffled packets with duplicates, across a sequence wrap", arguments: [1, 2, 3])
    func shuffled(seed: UInt64) {
        let sent = Self.stream(
            sizes: [6000, 2500, 1200, 9000, 10, 4000, 3000], keys: [0], initialSequenceNumber: 65520)
        var generator = SeededGenerator(state: seed)
        var packets = sent.flatMap(\.packets)
        // Shuffle within blocks of 8 packets (bounded reordering) and repeat a few.
        var shuffled: [CapturedPacket] = []
        for start in stride(from: 0, to: packets.count, by: 8) {
            shuffled += packets[start..<min(start + 8, packets.count)].shuffled(using: &generator)
        }
        for index in [3, 9, 15] { shuffled.insert(shuffled[index], at: index + 2) }
        packets = shuffled
        let assembler = VP8FrameAssembler()
        let events = Self.feed(packets, to: assembler, stepNs: 0)
        let frames = Self.frames(events)
        #expect(frames.map(\.bytes) == sent.map(\.bytes))
        #expect(!events.contains(.keyFrameNeeded))
        let statistics = assembler.statistics
        #expect(statistics.duplicates == 3)
        #expect(statistics.reordered > 0)
        #expect(statistics.lost == 0)
        #expect(statistics.framesDropped == 0)
    }

    @Test("a lost packet drops its frame, asks for a key frame and waits for one")
    func loss() {
        // Frame 0 key, 1 (lost packet), 2...5 deltas, 6 key, 7 delta.
        let sent = Self.stream(
            sizes: [3000, 3000, 500, 500, 500, 500, 3000, 500], keys: [0, 6])
        var packets = sent.flatMap(\.packets)
        let lostSequence = sent[1].packets[1].sequenceNumber
        packets.removeAll { $0.sequenceNumber == lostSequence }
        let assembler = VP8FrameAssembler(
            configuration: RTPReceiverConfiguration(maxReorderDelay: .milliseconds(50)))
        // 33 ms between packets: the gap settles after the next packet or two.
        let events = Self.feed(packets, to: assembler, stepNs: 33_000_000)
        let frames = Self.frames(events)
        #expect(frames.map(\.rtpTimestamp) == [0, 18000, 21000])
        #expect(frames.map(\.isKeyFrame) == [true, true, false])
        #expect(events.contains(.frameDropped(.packetsLost)))
        #expect(events.contains(.frameDropped(.waitingForKeyFrame)))
        let requests = events.filter { $0 == .keyFrameNeeded }.count
        #expect(requests >= 1)
        // Rate limit: the ~400 ms of waiting allows at most two requests at 250 ms apart.
        #expect(requests <= 2)
        let statistics = assembler.statistics
        #expect(statistics.lost == 1)
        #expect(statistics.keyFrameRequests == requests)
        #expect(statistics.framesDropped == events.filter { if case .frameDropped = $0 { true } else { false } }.count)
        // Nothing between the loss and the key frame was emitted.
        let lossIndex = events.firstIndex(of: .frameDropped(.packetsLost)) ?? 0
        let keyIndex = events.lastIndex {
            if case .frame(let frame) = $0 { frame.rtpTimestamp == 18000 } else { false }
        }
        #expect(keyIndex.map { $0 > lossIndex } == true)
    }

    @Test("a stream that starts with delta frames asks for a key frame")
    func startsWithDelta() {
        let sent = Self.stream(sizes: [500, 500, 500, 500, 2000, 500], keys: [4])
        let assembler = VP8FrameAssembler()
        let events = Self.feed(sent.flatMap(\.packets), to: assembler, stepNs: 60_000_000)
        #expect(Self.frames(events).map(\.rtpTimestamp) == [12000, 15000])
        #expect(events.contains(.keyFrameNeeded))
    }

    @Test("packets of another payload type are counted and ignored")
    func wrongPayloadType() {
        let sent = Self.stream(sizes: [100], keys: [0])
        let assembler = VP8FrameAssembler(configuration: RTPReceiverConfiguration(payloadType: 100))
        #expect(Self.feed(sent.flatMap(\.packets), to: assembler).isEmpty)
        #expect(assembler.statistics.wrongPayloadType == 1)
    }
}
