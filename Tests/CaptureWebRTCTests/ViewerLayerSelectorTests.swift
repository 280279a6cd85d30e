import Testing

@testable import CapturePreview

/// The per-viewer layer selector on schedules of estimates, in virtual time.
@Suite struct ViewerLayerSelectorTests {
    typealias Layer = ViewerLayerSelector.Layer

    /// 1280x720 in three layers at a 3 Mbit/s target: 150, 500 and 2350 kbit/s, all on.
    static let three = [
        Layer(isActive: true, needKbps: 150), Layer(isActive: true, needKbps: 500),
        Layer(isActive: true, needKbps: 2_350),
    ]
    let start = ContinuousClock.now

    func at(_ seconds: Double) -> ContinuousClock.Instant { start + .milliseconds(Int((seconds * 1_000).rounded())) }

    /// Feeds one key frame of `layer` (the switch) and returns the decision.
    func key(
        _ selector: inout ViewerLayerSelector, _ layer: Int, at seconds: Double, layers: [Layer] = three
    ) -> ViewerLayerSelector.FrameDecision {
        selector.frame(
            simulcastIndex: layer, isKeyFrame: true, rtpTimestamp: UInt32(seconds * 90_000), layers: layers,
            at: at(seconds))
    }

    @Test("the first layer is the highest that fits the start estimate, asked for at once")
    func startsAtTheHighestLayerThatFits() {
        for (estimate, expected) in [(300, 0), (600, 1), (3_000, 2), (10, 0)] {
            var selector = ViewerLayerSelector(estimateKbps: estimate)
            #expect(selector.update(layers: Self.three, at: at(0)) == expected)
            #expect(selector.pending == expected)
            #expect(selector.current == nil)
        }
        // Without layers (before the encoder's first frame), layer 0.
        var selector = ViewerLayerSelector(estimateKbps: 3_000)
        #expect(selector.update(layers: [], at: at(0)) == 0)
    }

    @Test("frames reach the viewer from a key frame of its layer on, and only its layer's")
    func forwardsFromAKeyFrameOfItsLayer() {
        var selector = ViewerLayerSelector(estimateKbps: 600)
        _ = selector.update(layers: Self.three, at: at(0))
        let before = selector.frame(
            simulcastIndex: 1, isKeyFrame: false, rtpTimestamp: 0, layers: Self.three, at: at(0.01))
        #expect(!before.forward)
        #expect(!key(&selector, 0, at: 0.02).forward)
        let switched = key(&selector, 1, at: 0.03)
        #expect(switched.forward && switched.switched)
        #expect(selector.current == 1 && selector.pending == nil)
        let delta = selector.frame(
            simulcastIndex: 1, isKeyFrame: false, rtpTimestamp: 5_000, layers: Self.three, at: at(0.06))
        #expect(delta.forward && !delta.switched)
        #expect(!key(&selector, 2, at: 0.07).forward)
        #expect(selector.statistics.framesForwarded == 2)
    }

    @Test("up only after the estimate has cleared the next layer's need by the margin for the hold, unbroken")
    func movesUpAfterTheHold() {
        var selector = ViewerLayerSelector(estimateKbps: 300)
        _ = selector.update(layers: Self.three, at: at(0))
        _ = key(&selector, 0, at: 0.03)
        // 590 < 500 × 1.2: no hold starts.
        #expect(selector.setEstimate(590, layers: Self.three, at: at(1)) == nil)
        #expect(selector.update(layers: Self.three, at: at(4)) == nil)
        // 650 clears it: 1.9 s later still nothing, a dip at 2.5 s restarts the hold.
        #expect(selector.setEstimate(650, layers: Self.three, at: at(5)) == nil)
        #expect(selector.update(layers: Self.three, at: at(6.9)) == nil)
        #expect(selector.setEstimate(560, layers: Self.three, at: at(7.5)) == nil)
        #expect(selector.setEstimate(650, layers: Self.three, at: at(7.6)) == nil)
        #expect(selector.update(layers: Self.three, at: at(9.5)) == nil)
        #expect(selector.update(layers: Self.three, at: at(9.6)) == 1)
        #expect(selector.pending == 1 && selector.current == 0)
        // Until the key frame of layer 1 the viewer keeps layer 0.
        let old = selector.frame(
            simulcastIndex: 0, isKeyFrame: false, rtpTimestamp: 900_000, layers: Self.three, at: at(9.63))
        #expect(old.forward)
        #expect(key(&selector, 1, at: 9.66).switched)
        #expect(selector.statistics.switchesUp == 1)
    }

    @Test("a large estimate jumps to the highest layer it clears, after one hold")
    func jumpsToTheHighestRoomyLayer() {
        var selector = ViewerLayerSelector(estimateKbps: 300)
        _ = selector.update(layers: Self.three, at: at(0))
        _ = key(&selector, 0, at: 0.03)
        #expect(selector.setEstimate(3_000, layers: Self.three, at: at(1)) == nil)
        #expect(selector.update(layers: Self.three, at: at(3)) == 2)
    }

    @Test("down at once when the estimate falls under the layer's need, to the highest that fits")
    func movesDownAtOnce() {
        var selector = ViewerLayerSelector(estimateKbps: 3_000)
        _ = selector.update(layers: Self.three, at: at(0))
        _ = key(&selector, 2, at: 0.03)
        #expect(selector.setEstimate(1_000, layers: Self.three, at: at(1)) == 1)
        #expect(selector.pending == 1 && selector.current == 2)
        // Lower still before the switch: straight on to layer 0, asked for at once.
        #expect(selector.setEstimate(100, layers: Self.three, at: at(1.01)) == 0)
        #expect(key(&selector, 0, at: 1.03).switched)
        #expect(selector.current == 0)
        // Nothing lower than layer 0: it stays.
        #expect(selector.setEstimate(20, layers: Self.three, at: at(2)) == nil)
        #expect(selector.current == 0 && selector.pending == nil)
        #expect(selector.statistics.switchesDown == 1)
    }

    @Test("a move down cancels a switch up under way")
    func downCancelsAPendingSwitchUp() {
        var selector = ViewerLayerSelector(estimateKbps: 700)
        _ = selector.update(layers: Self.three, at: at(0))
        _ = key(&selector, 1, at: 0.03)
        _ = selector.setEstimate(3_000, layers: Self.three, at: at(1))
        #expect(selector.update(layers: Self.three, at: at(3)) == 2)
        #expect(selector.setEstimate(800, layers: Self.three, at: at(3.01)) == nil)
        #expect(selector.pending == nil && selector.current == 1)
        #expect(!key(&selector, 2, at: 3.03).forward)
    }

    @Test("a layer the encoder turns off moves its viewer down at once")
    func leavesALayerTurnedOff() {
        var selector = ViewerLayerSelector(estimateKbps: 3_000)
        _ = selector.update(layers: Self.three, at: at(0))
        _ = key(&selector, 2, at: 0.03)
        var layers = Self.three
        layers[2].isActive = false
        #expect(selector.update(layers: layers, at: at(1)) == 1)
        // An inactive layer is never a candidate, however large the estimate.
        #expect(key(&selector, 1, at: 1.03, layers: layers).switched)
        #expect(selector.update(layers: layers, at: at(10)) == nil)
        // Fewer layers (a CPU-overuse step): the same.
        var two = ViewerLayerSelector(estimateKbps: 3_000)
        _ = two.update(layers: Self.three, at: at(0))
        _ = key(&two, 2, at: 0.03)
        #expect(two.update(layers: Array(Self.three.prefix(2)), at: at(1)) == 1)
    }

    @Test("the key frame of the layer headed for is asked again every retry interval until it comes")
    func retriesTheKeyFrameRequest() {
        var selector = ViewerLayerSelector(estimateKbps: 300)
        #expect(selector.update(layers: Self.three, at: at(0)) == 0)
        #expect(selector.update(layers: Self.three, at: at(0.9)) == nil)
        #expect(selector.update(layers: Self.three, at: at(1)) == 0)
        #expect(selector.update(layers: Self.three, at: at(1.5)) == nil)
        #expect(selector.update(layers: Self.three, at: at(2)) == 0)
        _ = key(&selector, 0, at: 2.03)
        #expect(selector.update(layers: Self.three, at: at(5)) == nil)
        #expect(selector.statistics.keyFrameRequests == 3)
    }

    @Test("the viewer's own key-frame request names the layer it heads for, else the one it is on")
    func pictureLossAsksTheViewersLayer() {
        var selector = ViewerLayerSelector(estimateKbps: 700)
        _ = selector.update(layers: Self.three, at: at(0))
        #expect(selector.keyFrameWanted(at: at(0.01)) == 1)
        _ = key(&selector, 1, at: 0.03)
        #expect(selector.keyFrameWanted(at: at(1)) == 1)
        _ = selector.setEstimate(200, layers: Self.three, at: at(2))
        #expect(selector.keyFrameWanted(at: at(2.01)) == 0)
    }

    @Test("congestion stops the frames at once, heads one layer down, and resumes at a key frame asked then")
    func congestionPausesAndStepsDown() {
        var selector = ViewerLayerSelector(estimateKbps: 3_000)
        _ = selector.update(layers: Self.three, at: at(0))
        _ = key(&selector, 2, at: 0.03)
        #expect(selector.setCongested(true, layers: Self.three, at: at(1)) == nil)
        #expect(selector.isPaused && selector.current == nil && selector.pending == 1)
        #expect(!key(&selector, 1, at: 1.03).forward)
        let delta = selector.frame(
            simulcastIndex: 2, isKeyFrame: false, rtpTimestamp: 0, layers: Self.three, at: at(1.06))
        #expect(!delta.forward)
        // No retries and no move up while paused, however long.
        #expect(selector.update(layers: Self.three, at: at(5)) == nil)
        #expect(selector.setCongested(true, layers: Self.three, at: at(5)) == nil)
        #expect(selector.setCongested(false, layers: Self.three, at: at(6)) == 1)
        #expect(!selector.isPaused)
        #expect(key(&selector, 1, at: 6.03).forward)
        #expect(selector.statistics.switchesDown == 1)
        #expect(selector.statistics.congestionPauses == 1)
        // The hold starts again after the pause.
        #expect(selector.update(layers: Self.three, at: at(6.04)) == nil)
        #expect(selector.update(layers: Self.three, at: at(8.04)) == 2)
    }

    @Test("switching up within one capture instant does not repeat the RTP timestamp on the viewer's stream")
    func switchUpWithinAnInstantKeepsTimestampsRising() {
        var selector = ViewerLayerSelector(
            configuration: ViewerLayerSelector.Configuration(upHold: .zero), estimateKbps: 300)
        _ = selector.update(layers: Self.three, at: at(0))
        _ = key(&selector, 0, at: 0)
        #expect(selector.setEstimate(3_000, layers: Self.three, at: at(0.01)) == 2)
        let low = selector.frame(
            simulcastIndex: 0, isKeyFrame: false, rtpTimestamp: 3_000, layers: Self.three, at: at(0.033))
        let high = selector.frame(
            simulcastIndex: 2, isKeyFrame: true, rtpTimestamp: 3_000, layers: Self.three, at: at(0.04))
        #expect(low.forward && low.rtpTimestamp == 3_000)
        #expect(high.forward && high.switched && high.rtpTimestamp == 3_001)
        let next = selector.frame(
            simulcastIndex: 2, isKeyFrame: false, rtpTimestamp: 6_000, layers: Self.three, at: at(0.07))
        #expect(next.rtpTimestamp == 6_000)
    }

    /// A simulcast encoder in virtual time: every 33 ms one frame per active layer, lowest first; a layer's next
    /// frame is a key frame when it was asked for (or is its first).
    struct VirtualEncoder {
        var keyWanted: Set<Int> = [0, 1, 2]
        var instant = 0

        mutating func instantFrames(layers: [Layer]) -> [(layer: Int, key: Bool, timestamp: UInt32)] {
            defer { instant += 1 }
            return layers.indices.filter { layers[$0].isActive }.map { layer in
                (layer, keyWanted.remove(layer) != nil, UInt32(instant * 3_000))
            }
        }
    }

    @Test("on a schedule of estimates, the layer forwarded follows it: up after the hold, down at once")
    func followsAScheduleOfEstimates() {
        // (from second, estimate kbit/s)
        let schedule: [(Double, Int)] = [(0, 300), (2, 3_000), (10, 800), (14, 3_000), (20, 120)]
        var selector = ViewerLayerSelector(estimateKbps: schedule[0].1)
        var encoder = VirtualEncoder()
        var lastTimestamp: UInt32?
        var forwardedPerInstant: [Int: [Int]] = [:]
        var scheduleIndex = 0
        if let ask = selector.update(layers: Self.three, at: at(0)) { encoder.keyWanted.insert(ask) }
        for instant in 0..<(24 * 30) {
            let seconds = Double(instant) / 30
            while scheduleIndex + 1 < schedule.count, schedule[scheduleIndex + 1].0 <= seconds {
                scheduleIndex += 1
                let ask = selector.setEstimate(schedule[scheduleIndex].1, layers: Self.three, at: at(seconds))
                if let ask { encoder.keyWanted.insert(ask) }
            }
            for frame in encoder.instantFrames(layers: Self.three) {
                let decision = selector.frame(
                    simulcastIndex: frame.layer, isKeyFrame: frame.key, rtpTimestamp: frame.timestamp,
                    layers: Self.three, at: at(seconds + 0.005 * Double(frame.layer)))
                if let ask = decision.keyFrameRequest { encoder.keyWanted.insert(ask) }
                guard decision.forward else { continue }
                if let lastTimestamp { #expect(Int32(bitPattern: decision.rtpTimestamp &- lastTimestamp) > 0) }
                lastTimestamp = decision.rtpTimestamp
                forwardedPerInstant[instant, default: []].append(frame.layer)
            }
        }
        /// The layer the viewer got at `seconds` (the last one forwarded in that instant).
        func layer(at seconds: Double) -> Int? { forwardedPerInstant[Int(seconds * 30)]?.last }
        #expect(layer(at: 1) == 0)
        #expect(layer(at: 3.9) == 0)  // 3000 from 2 s: held 2 s
        #expect(layer(at: 4.1) == 2)
        #expect(layer(at: 9.9) == 2)
        #expect(layer(at: 10.1) == 1)  // 800 at 10 s: at once (the next instant's key frame)
        #expect(layer(at: 15.9) == 1)
        #expect(layer(at: 16.1) == 2)
        #expect(layer(at: 20.1) == 0)
        #expect(layer(at: 23.9) == 0)
        // Every instant forwarded something (no gap at a switch); at most two at a switch up (timestamps rewritten).
        #expect((0..<(24 * 30)).allSatisfy { forwardedPerInstant[$0] != nil })
        #expect(forwardedPerInstant.values.filter { $0.count == 2 }.count == 2)
        #expect(selector.statistics.switchesUp == 2)
        #expect(selector.statistics.switchesDown == 2)
    }
}
