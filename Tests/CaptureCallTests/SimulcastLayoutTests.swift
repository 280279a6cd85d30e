import CaptureCall
import CaptureCore
import Testing

/// `SimulcastLayout` against figures worked out by hand from libwebrtc's `kSimulcastFormatsVP8` table
/// (`video/config/simulcast.cc`; max/target/min in kbit/s):
///
///     1920x1080 3 layers 5000/4000/800     480x270 2 layers 450/350/150
///     1280x720  3 layers 2500/2500/600     320x180 1 layer  200/150/30
///     960x540   3 layers 1200/1200/350     0x0     1 layer  (the 320x180 figures)
///     640x360   2 layers  700/ 500/150
@Suite("SimulcastLayout")
struct SimulcastLayoutTests {
    static func size(_ width: Int, _ height: Int) -> Dimensions { Dimensions(width: width, height: height) }

    /// `[width, height, min, target, max]` per layer, lowest first.
    static func figures(_ layout: SimulcastLayout) -> [[Int]] {
        layout.streams.map {
            [$0.dimensions.width, $0.dimensions.height, $0.minKbps, $0.targetKbps, $0.maxKbps]
        }
    }

    @Test("1280x720: three layers, each a row of the table")
    func hd() {
        let layout = SimulcastLayout(input: Self.size(1280, 720), maxLayers: 3, temporalLayers: 3)
        // 1280x720 is a row (3 layers). 2^(3-1) = 4 divides 1280 and 720: no rounding. 640x360 and 320x180 are rows
        // too, so no interpolation: their figures as they stand, min/target/max.
        #expect(
            Self.figures(layout) == [
                [320, 180, 30, 150, 200],
                [640, 360, 150, 500, 700],
                [1280, 720, 600, 2500, 2500],
            ])
        #expect(layout.streams.allSatisfy { $0.temporalLayers == 3 })
        // GetTotalMaxBitrate: 150 + 500 (targets below the top) + 2500 (the top's max).
        #expect(layout.minKbps == 30 && layout.maxKbps == 3150 && layout.bitrateRange == 30...3150)
        // CalculateMaxPadBitrateBps: 150 + 500 (targets below the top) + min(1.2 × 600, 2500) = 1370.
        #expect(layout.paddingTargetKbps == 1370)
    }

    @Test("960x540: three layers; the lowest, 240x135, below the last row, takes the 320x180 figures")
    func qhd() {
        let layout = SimulcastLayout(input: Self.size(960, 540), maxLayers: 3, temporalLayers: 3)
        // 960 and 540 are multiples of 4. 480x270 is a row; 240x135 (32400 px) falls under the 0x0 row, which
        // carries the 320x180 figures: interpolating between two equal rows gives them back.
        #expect(
            Self.figures(layout) == [
                [240, 135, 30, 150, 200],
                [480, 270, 150, 350, 450],
                [960, 540, 350, 1200, 1200],
            ])
        // 150 + 350 + 1200.
        #expect(layout.maxKbps == 1700)
    }

    @Test("640x480: two layers, interpolated by pixel count (the research note's 833/687/203 and 267/203/62)")
    func vga() {
        let layout = SimulcastLayout(input: Self.size(640, 480), maxLayers: 3, temporalLayers: 3)
        // 307200 px lies between 960x540 (518400) and 640x360 (230400): fraction towards 640x360
        // (518400 − 307200) / (518400 − 230400) = 0.7333 ≥ 0.1, so 640x360's 2 layers.
        //   max    1200 × 0.2667 + 700 × 0.7333 = 833.33 → 833
        //   target 1200 × 0.2667 + 500 × 0.7333 = 686.67 → 686 (truncated to kbit/s, as VideoCodecInitializer)
        //   min     350 × 0.2667 + 150 × 0.7333 = 203.33 → 203
        // 320x240 (76800 px) between 480x270 (129600) and 320x180 (57600): fraction (129600 − 76800) / 72000 = 0.7333
        //   max     450 × 0.2667 + 200 × 0.7333 = 266.67 → 266
        //   target  350 × 0.2667 + 150 × 0.7333 = 203.33 → 203
        //   min     150 × 0.2667 +  30 × 0.7333 =  62
        #expect(
            Self.figures(layout) == [
                [320, 240, 62, 203, 266],
                [640, 480, 203, 686, 833],
            ])
        #expect(layout.maxKbps == 203 + 833)
        // 203 + min(1.2 × 203 = 243.6 → 244, 686).
        #expect(layout.paddingTargetKbps == 203 + 244)
    }

    @Test("640x360: two layers")
    func nHD() {
        let layout = SimulcastLayout(input: Self.size(640, 360), maxLayers: 3, temporalLayers: 3)
        #expect(Self.figures(layout) == [[320, 180, 30, 150, 200], [640, 360, 150, 500, 700]])
        #expect(layout.maxKbps == 150 + 700)
    }

    @Test("320x180: one layer")
    func qnHD() {
        let layout = SimulcastLayout(input: Self.size(320, 180), maxLayers: 3, temporalLayers: 3)
        #expect(Self.figures(layout) == [[320, 180, 30, 150, 200]])
        #expect(layout.bitrateRange == 30...200)
        #expect(layout.paddingTargetKbps == 0, "one layer: no padding (libwebrtc pads a single stream only on request)")
    }

    @Test("1920x1080: three layers from the top row; larger inputs keep its figures")
    func fullHD() {
        let layout = SimulcastLayout(input: Self.size(1920, 1080), maxLayers: 3, temporalLayers: 3)
        #expect(
            Self.figures(layout) == [
                [480, 270, 150, 350, 450],
                [960, 540, 350, 1200, 1200],
                [1920, 1080, 800, 4000, 5000],
            ])
        let larger = SimulcastLayout(input: Self.size(3840, 2160), maxLayers: 3, temporalLayers: 3)
        #expect(larger.streams.last?.maxKbps == 5000 && larger.streams.count == 3)
    }

    @Test("layer count: the table's limit, rounded up within 10 % of the row above, and the requested maximum")
    func layerCounts() {
        func count(_ width: Int, _ height: Int, _ wanted: Int = 3) -> Int {
            SimulcastLayout.layerCount(input: Self.size(width, height), maxLayers: wanted)
        }
        #expect(count(1920, 1080) == 3 && count(1280, 720) == 3 && count(960, 540) == 3)
        #expect(count(640, 480) == 2 && count(640, 360) == 2 && count(480, 270) == 2)
        #expect(count(320, 240) == 1 && count(320, 180) == 1 && count(160, 90) == 1)
        // 940x530 is 4.3 % of the way from 960x540 down to 640x360 (< 10 %): 960x540's 3 layers.
        #expect(count(940, 530) == 3)
        // 900x500 is 16 % of the way: 640x360's 2.
        #expect(count(900, 500) == 2)
        #expect(count(1280, 720, 2) == 2 && count(1280, 720, 1) == 1)
        // Out-of-range requests are clamped to 1…3.
        #expect(count(1280, 720, 7) == 3 && count(1280, 720, 0) == 1)
    }

    @Test("sizes: the top rounded down to a multiple of 2^(layers−1), each lower layer half the one above")
    func normalization() {
        let layout = SimulcastLayout(input: Self.size(1278, 718), maxLayers: 3, temporalLayers: 3)
        // 917604 px is 1 % of the way from 1280x720 down to 960x540: 3 layers. 1278 → 1276, 718 → 716 (multiples
        // of 4), then 638x358 and 319x179.
        #expect(layout.streams.map(\.dimensions) == [Self.size(319, 179), Self.size(638, 358), Self.size(1276, 716)])
        // Between the 960x540 and 1280x720 rows.
        let top = layout.streams[2]
        #expect((1200...2500).contains(top.maxKbps) && (350...600).contains(top.minKbps))
        let two = SimulcastLayout(input: Self.size(1280, 720), maxLayers: 2, temporalLayers: 3)
        #expect(two.streams.map(\.dimensions) == [Self.size(640, 360), Self.size(1280, 720)])
        #expect(two.maxKbps == 500 + 2500)
        let one = SimulcastLayout(input: Self.size(1280, 720), maxLayers: 1, temporalLayers: 3)
        #expect(Self.figures(one) == [[1280, 720, 600, 2500, 2500]])
    }

    @Test("fewer temporal layers: the lowest layer's max and target scaled so its base layer keeps its rate")
    func temporalAdjustment() {
        let input = Self.size(1280, 720)
        // One temporal layer: × 0.4 / 1.0. 200 × 0.4 = 80, 150 × 0.4 = 60.
        let one = SimulcastLayout(input: input, maxLayers: 3, temporalLayers: 1)
        #expect(Self.figures(one)[0] == [320, 180, 30, 60, 80])
        // Two: × 0.4 / 0.6 in float (0.6666666). 200 × that = 133333.33 bit/s → 133; 150 × that = 99999.99 bit/s,
        // truncated by static_cast<int> to 99999 → 99 kbit/s (libwebrtc gives the same).
        let two = SimulcastLayout(input: input, maxLayers: 3, temporalLayers: 2)
        #expect(Self.figures(two)[0] == [320, 180, 30, 99, 133])
        // The upper layers are unchanged.
        #expect(Self.figures(one).dropFirst() == Self.figures(two).dropFirst())
        #expect(one.streams.allSatisfy { $0.temporalLayers == 1 } && two.streams.allSatisfy { $0.temporalLayers == 2 })
    }

    @Test("degenerate inputs make a layout without trapping")
    func degenerate() {
        for size in [Self.size(0, 0), Self.size(-5, 10), Self.size(2, 2), Self.size(1 << 40, 1 << 40)] {
            let layout = SimulcastLayout(input: size, maxLayers: 3, temporalLayers: 3)
            #expect(!layout.streams.isEmpty)
        }
    }
}
