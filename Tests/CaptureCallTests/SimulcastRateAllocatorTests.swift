import CaptureCall
import CaptureCore
import Testing

/// `SimulcastRateAllocator` on schedules of targets, against libwebrtc's rules (`simulcast_rate_allocator.cc`) worked
/// out by hand. The 1280x720 layers are 320x180 30/150/200, 640x360 150/500/700 and 1280x720 600/2500/2500
/// (min/target/max kbit/s): the top layer needs 150 + 500 + 600 = 1250 to be on, and 150 + 500 + 1.2 × 600 = 1370 to
/// come back on.
@Suite("SimulcastRateAllocator")
struct SimulcastRateAllocatorTests {
    static let hd = SimulcastLayout(input: Dimensions(width: 1280, height: 720), maxLayers: 3, temporalLayers: 3)

    @Test("a schedule down then up: layers on and off, the hysteresis, leftovers to the top active layer")
    func schedule() {
        var allocator = SimulcastRateAllocator(streams: Self.hd.streams)
        #expect(allocator.activeLayers == [false, false, false])
        let steps: [(total: Int, expected: [Int], why: String)] = [
            // Every layer to its target (150 + 500 + 2500); the 850 left cannot go past the top's max 2500.
            (4000, [150, 500, 2500], "all full"),
            (2000, [150, 500, 1350], "the top takes what is left"),
            (1250, [150, 500, 600], "exactly the top's min"),
            // 599 left < 600: the top is off; the 599 go to the top active layer, 640x360, up to its max 700.
            (1249, [150, 700, 0], "top off, leftovers to 640x360"),
            // Off now: needs 1.2 × 600 = 720, and 1300 − 650 = 650 < 720.
            (1300, [150, 700, 0], "hysteresis: still off"),
            (1369, [150, 700, 0], "719 < 720: still off"),
            (1370, [150, 500, 720], "720: back on"),
            // On now: 600 is enough again.
            (1300, [150, 500, 650], "on: stays on above its min"),
            (500, [150, 350, 0], "640x360 below its target"),
            (100, [100, 0, 0], "only the lowest"),
            // The lowest layer always gets its min.
            (10, [30, 0, 0], "raised to the lowest min"),
            // 640x360 is off: it needs 1.2 × 150 = 180; 20 left go to 320x180, up to its max 200.
            (170, [170, 0, 0], "640x360 needs 180"),
            (330, [150, 180, 0], "640x360 back on at 180"),
        ]
        for step in steps {
            let allocation = allocator.allocate(totalKbps: step.total)
            #expect(allocation.layers.map(\.kbps) == step.expected, "\(step.total) kbit/s: \(step.why)")
            #expect(allocator.activeLayers == step.expected.map { $0 > 0 }, "\(step.total)")
            #expect(allocation.isBandwidthLimited == step.expected.contains(0), "\(step.total)")
            #expect(allocation.activeLayerCount == step.expected.filter { $0 > 0 }.count)
        }
    }

    @Test("the first allocation has no hysteresis (a reconfiguration of layers already on)")
    func firstAllocation() {
        var fresh = SimulcastRateAllocator(streams: Self.hd.streams)
        #expect(fresh.allocate(totalKbps: 1250).layers.map(\.kbps) == [150, 500, 600])
        var dropped = SimulcastRateAllocator(streams: Self.hd.streams)
        _ = dropped.allocate(totalKbps: 1000)
        #expect(dropped.allocate(totalKbps: 1250).layers.map(\.kbps) == [150, 700, 0])
    }

    @Test("the research note's example: 960x540/480x270/240x135 at 425 kbit/s is 150 + 275, the top off")
    func researchExample() {
        let layout = SimulcastLayout(input: Dimensions(width: 960, height: 540), maxLayers: 3, temporalLayers: 3)
        var allocator = SimulcastRateAllocator(streams: layout.streams)
        let allocation = allocator.allocate(totalKbps: 425)
        #expect(allocation.layers.map(\.kbps) == [150, 275, 0])
        #expect(allocation.totalKbps == 425)
    }

    @Test("temporal split: cumulative 40/60/100 % for three layers, 60/100 % for two, rounded")
    func temporalSplit() {
        var allocator = SimulcastRateAllocator(streams: Self.hd.streams)
        let allocation = allocator.allocate(totalKbps: 2000)
        // 150: 60, 90, 150. 500: 200, 300, 500. 1350: 540, 810, 1350.
        #expect(allocation.layers.map(\.temporalTargetsKbps) == [[60, 90, 150], [200, 300, 500], [540, 810, 1350]])
        let off = allocator.allocate(totalKbps: 1000)
        #expect(off.layers[2].temporalTargetsKbps.isEmpty && !off.layers[2].isActive)
        #expect(SimulcastAllocation.cumulativeTemporalTargets(kbps: 333, temporalLayers: 2) == [200, 333])
        // 333 × 0.4 = 133.2 → 133; × 0.6 = 199.8 → 200.
        #expect(SimulcastAllocation.cumulativeTemporalTargets(kbps: 333, temporalLayers: 3) == [133, 200, 333])
        #expect(SimulcastAllocation.cumulativeTemporalTargets(kbps: 333, temporalLayers: 1) == [333])
        #expect(SimulcastAllocation.cumulativeTemporalTargets(kbps: 0, temporalLayers: 3) == [])
    }

    @Test("no streams, negative totals: no trap")
    func degenerate() {
        var empty = SimulcastRateAllocator(streams: [])
        #expect(empty.allocate(totalKbps: 1000).layers.isEmpty)
        var allocator = SimulcastRateAllocator(streams: Self.hd.streams)
        #expect(allocator.allocate(totalKbps: -5).layers.map(\.kbps) == [30, 0, 0])
        #expect(allocator.allocate(totalKbps: .max).layers.map(\.kbps) == [150, 500, 2500])
    }
}
