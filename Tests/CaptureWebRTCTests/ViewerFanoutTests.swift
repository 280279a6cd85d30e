import CaptureCall
import CaptureCore
import CaptureVP8
import Testing

@testable import CapturePreview

/// A simulcast encoder for the fan-out tests: 1280x720 in libwebrtc's three layers, shared by
/// `SimulcastRateAllocator` as the pipeline does; it records what it was asked and makes the frames of one capture
/// instant on demand (a key frame on a layer that was asked for one, or has just been turned on).
final class FakeLayeredEncoder: LayeredEncoder {
    struct State {
        var allocator: SimulcastRateAllocator
        var layers: [SimulcastLayerStatistics]
        var targetKbps: Int
        var keyFrameRequests: [(reason: KeyFrameRequestReason, layer: Int?)] = []
        var targets: [Int] = []
        var droppingCalls: [Bool] = []
        var keyWanted: Set<Int> = [0, 1, 2]
        var instant = 0
    }

    static let layout = SimulcastLayout(
        input: Dimensions(width: 1280, height: 720), maxLayers: 3, temporalLayers: 3)
    let state: Locked<State>

    init(targetKbps: Int = 1_000) {
        var allocator = SimulcastRateAllocator(streams: Self.layout.streams)
        var layers = Self.layout.streams.enumerated().map { SimulcastLayerStatistics(index: $0, stream: $1) }
        Self.apply(allocator.allocate(totalKbps: targetKbps), to: &layers)
        state = Locked(State(allocator: allocator, layers: layers, targetKbps: targetKbps))
    }

    static func apply(_ allocation: SimulcastAllocation, to layers: inout [SimulcastLayerStatistics]) {
        for index in layers.indices {
            layers[index].targetKbps = allocation.layers[index].kbps
            layers[index].isActive = allocation.layers[index].isActive
        }
    }

    var bitrateRange: ClosedRange<Int> { Self.layout.bitrateRange }
    var layers: [SimulcastLayerStatistics] { state.withLock { $0.layers } }

    func requestKeyFrame(reason: KeyFrameRequestReason, simulcastIndex: Int?) {
        state.withLock { state in
            state.keyFrameRequests.append((reason, simulcastIndex))
            if let simulcastIndex { state.keyWanted.insert(simulcastIndex) } else { state.keyWanted = [0, 1, 2] }
        }
    }

    func setTargetBitrate(kbps: Int, reason: BitrateChangeReason) -> Int {
        state.withLock { state in
            let applied = min(max(kbps, bitrateRange.lowerBound), bitrateRange.upperBound)
            state.targets.append(applied)
            state.targetKbps = applied
            let wasActive = state.layers.map(\.isActive)
            Self.apply(state.allocator.allocate(totalKbps: applied), to: &state.layers)
            for index in state.layers.indices where state.layers[index].isActive && !wasActive[index] {
                state.keyWanted.insert(index)
            }
            return applied
        }
    }

    func setCongestionFrameDropping(_ drop: Bool) {
        state.withLock { $0.droppingCalls.append(drop) }
    }

    /// The frames of the next capture instant, lowest layer first: one per active layer.
    func nextInstant() -> [EncodedFrame] {
        state.withLock { state in
            defer { state.instant += 1 }
            return state.layers.indices.filter { state.layers[$0].isActive }.map { index in
                let key = state.keyWanted.remove(index) != nil
                return EncodedFrame(
                    bytes: [UInt8(index)], isKeyFrame: key, rtpTimestamp: UInt32(state.instant * 3_000),
                    captureTimeNs: UInt64(state.instant) * 33_333_333, rotation: .degrees0,
                    dimensions: state.layers[index].dimensions, qp: 30, simulcastIndex: index)
            }
        }
    }

    var keyFrameRequests: [(reason: KeyFrameRequestReason, layer: Int?)] { state.withLock { $0.keyFrameRequests } }
    var targetKbps: Int { state.withLock { $0.targetKbps } }
}

/// A viewer's transport in the fan-out tests: keeps every frame it is given.
final class RecordingViewer: EncodedFrameSink {
    let frames = Locked<[EncodedFrame]>([])
    let finished = Locked(false)

    func consume(_ frame: EncodedFrame) { frames.withLock { $0.append(frame) } }
    func finish() { finished.withLock { $0 = true } }

    var received: [EncodedFrame] { frames.withLock { $0 } }
    /// The width of each frame received, in order.
    var widths: [Int] { received.map(\.dimensions.width) }
}

/// A clock the test moves.
final class VirtualClock: Sendable {
    let now: Locked<ContinuousClock.Instant>

    init() { now = Locked(ContinuousClock.now) }

    var instant: ContinuousClock.Instant { now.withLock { $0 } }
    func advance(_ duration: Duration) { now.withLock { $0 += duration } }
}

@Suite struct ViewerFanoutTests {
    let encoder = FakeLayeredEncoder()
    let clock = VirtualClock()
    let fanout: ViewerFanout<RecordingViewer>

    init() {
        let clock = clock
        fanout = ViewerFanout(selection: ViewerLayerSelector.Configuration(), clock: { clock.instant })
        fanout.attach(encoder)
    }

    /// Runs `seconds` of capture instants at 30 fps through the fan-out.
    func run(seconds: Double) {
        for _ in 0..<Int((seconds * 30).rounded()) {
            for frame in encoder.nextInstant() { fanout.consume(frame) }
            clock.advance(.milliseconds(33))
        }
    }

    @Test("two viewers with different estimates get different layers, as one stream each; the target is the larger")
    func viewersGetTheirOwnLayers() {
        let wide = RecordingViewer()
        let narrow = RecordingViewer()
        fanout.add(wide, id: "wide", estimateKbps: 3_000)
        fanout.add(narrow, id: "narrow", estimateKbps: 300)
        #expect(encoder.targetKbps == 3_000)
        run(seconds: 2)
        #expect(Set(wide.widths) == [1280])
        #expect(Set(narrow.widths) == [320])
        #expect(wide.received.first?.isKeyFrame == true && narrow.received.first?.isKeyFrame == true)
        // Each viewer got one frame per instant from its first, all as layer 0 of its one stream.
        #expect(wide.received.count == 60 && narrow.received.count == 60)
        #expect((wide.received + narrow.received).allSatisfy { $0.simulcastIndex == 0 })
        let states = fanout.layerStates
        #expect(states["wide"]?.current == 2 && states["narrow"]?.current == 0)
        // The narrow viewer's estimate falls: the target does not follow it; the wide viewer leaves: it does.
        #expect(fanout.setEstimate(200, reason: .senderEstimate, viewer: "narrow") == 3_000)
        #expect(fanout.remove(id: "wide") === wide)
        #expect(encoder.targetKbps == 200)
        #expect(fanout.sharedTargetKbps == 200)
    }

    @Test("a viewer switches only at a key frame of its new layer; until then it keeps its old one")
    func switchesAtAKeyFrameOfTheNewLayer() {
        let wide = RecordingViewer()
        let viewer = RecordingViewer()
        fanout.add(wide, id: "wide", estimateKbps: 3_000)
        fanout.add(viewer, id: "viewer", estimateKbps: 300)
        run(seconds: 1)
        // 700 clears 640x360's 500 kbit/s by 20 %: after the 2 s hold the selector asks a key frame of layer 1.
        _ = fanout.setEstimate(700, reason: .senderEstimate, viewer: "viewer")
        let before = encoder.keyFrameRequests.count
        run(seconds: 1.9)
        #expect(encoder.keyFrameRequests.count == before)
        #expect(Set(viewer.widths) == [320])
        run(seconds: 0.2)
        #expect(encoder.keyFrameRequests.dropFirst(before).map(\.layer) == [1])
        run(seconds: 1)
        let frames = viewer.received
        guard let first = frames.firstIndex(where: { $0.dimensions.width == 640 }) else {
            Issue.record("the viewer never got layer 1")
            return
        }
        #expect(frames[first].isKeyFrame)
        #expect(frames[..<first].allSatisfy { $0.dimensions.width == 320 })
        #expect(frames[first...].allSatisfy { $0.dimensions.width == 640 })
        // Switching up within the instant: the key frame follows the old layer's frame of the same capture time.
        #expect(frames[first].rtpTimestamp == frames[first - 1].rtpTimestamp &+ 1)
        #expect(
            zip(frames, frames.dropFirst()).allSatisfy { Int32(bitPattern: $1.rtpTimestamp &- $0.rtpTimestamp) > 0 })
        #expect(fanout.layerStates["viewer"]?.statistics.switchesUp == 1)
        // The wide viewer never noticed.
        #expect(Set(wide.widths) == [1280])
    }

    @Test("a PLI from one viewer asks a key frame of its layer only")
    func pictureLossAsksTheViewersLayer() {
        fanout.add(RecordingViewer(), id: "wide", estimateKbps: 3_000)
        fanout.add(RecordingViewer(), id: "narrow", estimateKbps: 300)
        run(seconds: 1)
        let before = encoder.keyFrameRequests.count
        let narrowControl = ViewerEncoderControl(fanout: fanout, viewerID: "narrow")
        let wideControl = ViewerEncoderControl(fanout: fanout, viewerID: "wide")
        // The viewer's connection has one stream: the index it names is its own layer 0, whatever that carries.
        narrowControl.requestKeyFrame(reason: .pictureLossIndication, simulcastIndex: 0)
        wideControl.requestKeyFrame(reason: .fullIntraRequest, simulcastIndex: 0)
        let asked = encoder.keyFrameRequests.dropFirst(before)
        #expect(asked.map(\.layer) == [0, 2])
        #expect(asked.map(\.reason) == [.pictureLossIndication, .fullIntraRequest])
        // A viewer that left, or never was, asks nothing.
        ViewerEncoderControl(fanout: fanout, viewerID: "gone").requestKeyFrame(
            reason: .pictureLossIndication, simulcastIndex: 0)
        #expect(encoder.keyFrameRequests.count == before + 2)
    }

    @Test("a congested viewer pauses and moves down alone; the shared encoder never drops frames for it")
    func congestionIsPerViewer() {
        let wide = RecordingViewer()
        let congested = RecordingViewer()
        fanout.add(wide, id: "wide", estimateKbps: 3_000)
        fanout.add(congested, id: "congested", estimateKbps: 3_000)
        run(seconds: 1)
        let control = ViewerEncoderControl(fanout: fanout, viewerID: "congested")
        control.setCongestionFrameDropping(true)
        let countAtPause = congested.received.count
        run(seconds: 1)
        #expect(congested.received.count == countAtPause)
        #expect(wide.received.count == 60)
        control.setCongestionFrameDropping(false)
        run(seconds: 0.5)
        let resumed = congested.received.dropFirst(countAtPause)
        #expect(resumed.first?.isKeyFrame == true)
        #expect(Set(resumed.map(\.dimensions.width)) == [640])
        #expect(encoder.state.withLock { $0.droppingCalls }.isEmpty)
        #expect(fanout.layerStates["congested"]?.statistics.congestionPauses == 1)
    }

    @Test("the shared target is the largest estimate, within the layout's range")
    func sharedTargetIsTheLargestEstimate() {
        fanout.add(RecordingViewer(), id: "a", estimateKbps: 300)
        #expect(encoder.targetKbps == 300)
        let b = ViewerEncoderControl(fanout: fanout, viewerID: "b")
        fanout.add(RecordingViewer(), id: "b", estimateKbps: 300)
        #expect(b.setTargetBitrate(kbps: 9_000, reason: .senderEstimate) == FakeLayeredEncoder.layout.maxKbps)
        #expect(encoder.targetKbps == FakeLayeredEncoder.layout.maxKbps)
        #expect(b.setTargetBitrate(kbps: 5, reason: .senderEstimate) == 300)
        #expect(encoder.state.withLock { $0.targets } == [300, FakeLayeredEncoder.layout.maxKbps, 300])
    }

    @Test("without layer selection every frame reaches every viewer and requests go to the encoder as they are")
    func withoutSelectionEverythingIsShared() {
        let shared = ViewerFanout<RecordingViewer>()
        shared.attach(encoder)
        let a = RecordingViewer()
        let b = RecordingViewer()
        shared.add(a, id: "a", estimateKbps: 300)
        shared.add(b, id: "b", estimateKbps: 3_000)
        let frames = encoder.nextInstant()
        for frame in frames { shared.consume(frame) }
        #expect(a.received == frames && b.received == frames)
        shared.keyFrameWanted(reason: .pictureLossIndication, viewer: "a")
        shared.setCongested(true, viewer: "a")
        #expect(encoder.keyFrameRequests.last?.layer == nil)
        #expect(encoder.state.withLock { $0.droppingCalls } == [true])
        #expect(encoder.state.withLock { $0.targets }.isEmpty)
        shared.finish()
        #expect(a.finished.withLock { $0 } && b.finished.withLock { $0 })
    }
}
