import CaptureCore
import Testing

/// Pixel formats a libyuv-based converter handles (what the tests treat as convertible).
let convertible: Set<PixelFormat> = [.nv12, .nv21, .yu12, .yv12, .yuyv, .uyvy, .mjpg, .rgb3, .bgr3]

func select(
    _ formats: [CaptureFormat], _ width: Int, _ height: Int, fpsLimit: Double = 30,
    preference: [PixelFormat] = PixelFormat.defaultPreference, canConvert: (PixelFormat) -> Bool = convertible.contains
) -> FormatSelection? {
    CaptureRules.selectFormat(
        from: formats,
        for: FormatRequest(
            target: Dimensions(width: width, height: height), fpsLimit: fpsLimit, preference: preference),
        canConvert: canConvert)
}

func size(_ width: Int, _ height: Int) -> Dimensions { Dimensions(width: width, height: height) }

@Suite("Format rule")
struct FormatSelectionTests {
    static let ladder = [
        CaptureFormat(.yuyv, 640, 480, fps: [30]), CaptureFormat(.yuyv, 1280, 720, fps: [30]),
        CaptureFormat(.yuyv, 1920, 1080, fps: [30]), CaptureFormat(.yuyv, 320, 240, fps: [30]),
    ]

    @Test(
        "the nearest size by |Δw| + |Δh| wins; at equal distance (same rate and format) the first listed",
        arguments: [
            (size(640, 480), size(640, 480), 0, SelectionRule.distance),
            (size(1280, 720), size(1280, 720), 0, .distance),
            (size(1000, 1000), size(1280, 720), 560, .distance),  // 1920x1080 is 1000 away, 640x480 880
            (size(100, 100), size(320, 240), 360, .distance),
            (size(4000, 3000), size(1920, 1080), 4000, .distance),
            (size(960, 600), size(640, 480), 440, .enumerationOrder),  // 1280x720 is 440 away too
            (size(1600, 900), size(1280, 720), 500, .enumerationOrder),  // 1920x1080 is 500 away too
            (size(720, 1280), size(640, 480), 880, .distance),  // portrait target: no rotation is applied
        ])
    func distance(_ target: Dimensions, _ expected: Dimensions, _ distance: Int, _ rule: SelectionRule) throws {
        let selection = try #require(select(Self.ladder, target.width, target.height))
        #expect(selection.dimensions == expected)
        #expect(selection.distance == distance)
        #expect(selection.decidingRule == rule)
    }

    @Test("equal distance: the higher frame rate wins (UVC: MJPG 1280x720@30 over YUYV 1280x720@10)")
    func frameRateTieBreak() throws {
        let formats = [
            CaptureFormat(.yuyv, 1280, 720, fps: [10, 5]), CaptureFormat(.mjpg, 1280, 720, fps: [30, 15, 10]),
        ]
        let selection = try #require(select(formats, 1280, 720))
        #expect(selection.pixelFormat == .mjpg)
        #expect(selection.fps == 30)
        #expect(selection.decidingRule == .frameRate)
        #expect(selection.formatIndex == 1)
        #expect(selection.candidateCount == 2)
        // With a limit of 10 both give 10 fps: the preference list decides (YUYV before MJPG).
        let limited = try #require(select(formats, 1280, 720, fpsLimit: 10))
        #expect(limited.pixelFormat == .yuyv)
        #expect(limited.fps == 10)
        #expect(limited.decidingRule == .preference)
    }

    @Test("distance beats frame rate")
    func distanceBeforeRate() throws {
        let formats = [CaptureFormat(.mjpg, 1920, 1080, fps: [60]), CaptureFormat(.yuyv, 1280, 720, fps: [5])]
        let selection = try #require(select(formats, 1280, 720, fpsLimit: 60))
        #expect(selection.pixelFormat == .yuyv)
        #expect(selection.decidingRule == .distance)
        #expect(selection.fps == 5)
    }

    @Test("equal distance and rate: the earlier pixel format in the preference list wins")
    func preferenceTieBreak() throws {
        let formats = [
            CaptureFormat(.mjpg, 640, 480, fps: [30]), CaptureFormat(.yuyv, 640, 480, fps: [30]),
            CaptureFormat(.nv12, 640, 480, fps: [30]), CaptureFormat(.yu12, 640, 480, fps: [30]),
        ]
        let byDefault = try #require(select(formats, 640, 480))
        #expect(byDefault.pixelFormat == .nv12)
        #expect(byDefault.decidingRule == .preference)
        let custom = try #require(select(formats, 640, 480, preference: [.mjpg, .yuyv]))
        #expect(custom.pixelFormat == .mjpg)
        #expect(custom.decidingRule == .preference)
        let yuyvFirst = try #require(select(formats, 640, 480, preference: [.yuyv]))
        #expect(yuyvFirst.pixelFormat == .yuyv)
    }

    @Test("formats not in the preference list rank after those in it, and among themselves by enumeration order")
    func notInPreference() throws {
        let formats = [
            CaptureFormat(.rgb3, 640, 480, fps: [30]), CaptureFormat(.bgr3, 640, 480, fps: [30]),
            CaptureFormat(.uyvy, 640, 480, fps: [30]),
        ]
        let selection = try #require(select(formats, 640, 480))
        #expect(selection.pixelFormat == .uyvy)
        #expect(selection.decidingRule == .preference)
        let withoutUYVY = try #require(select(Array(formats.prefix(2)), 640, 480))
        #expect(withoutUYVY.pixelFormat == .rgb3)
        #expect(withoutUYVY.decidingRule == .enumerationOrder)
        let empty = try #require(select(formats, 640, 480, preference: []))
        #expect(empty.pixelFormat == .rgb3)
        #expect(empty.decidingRule == .enumerationOrder)
    }

    @Test("all else equal: the earlier entry in the device's list")
    func enumerationOrder() throws {
        let formats = [
            CaptureFormat(.yuyv, 800, 600, fps: [30]), CaptureFormat(.yuyv, 640, 480, fps: [30]),
            CaptureFormat(.yuyv, 640, 480, fps: [30]),
        ]
        let selection = try #require(select(formats, 640, 480))
        #expect(selection.formatIndex == 1)
        #expect(selection.decidingRule == .enumerationOrder)
        // Two sizes at the same distance on either side: the first listed.
        let sides = [CaptureFormat(.yuyv, 1100, 600, fps: [30]), CaptureFormat(.yuyv, 900, 600, fps: [30])]
        #expect(try #require(select(sides, 1000, 600)).formatIndex == 0)
        #expect(try #require(select(sides.reversed(), 1000, 600)).dimensions == size(900, 600))
    }

    @Test("unconvertible formats are never picked; none convertible gives nil")
    func unconvertible() throws {
        let formats = [
            CaptureFormat(.grey, 1280, 720, fps: [60]), CaptureFormat(.h264, 1280, 720, fps: [30]),
            CaptureFormat(.yuyv, 640, 480, fps: [30]),
        ]
        let selection = try #require(select(formats, 1280, 720))
        #expect(selection.pixelFormat == .yuyv)
        #expect(selection.candidateCount == 1)
        #expect(selection.decidingRule == .onlyCandidate)
        #expect(select(formats, 1280, 720, canConvert: { _ in false }) == nil)
        #expect(select([], 1280, 720) == nil)
        #expect(try #require(select(formats, 1280, 720, canConvert: { $0 == .h264 })).pixelFormat == .h264)
    }

    @Test("the selection reports its format, index, size, distance, rate and an explanation")
    func reports() throws {
        let formats = [CaptureFormat(.yuyv, 640, 480, fps: [30, 15]), CaptureFormat(.nv12, 1280, 720, fps: [25])]
        let selection = try #require(select(formats, 1200, 700))
        #expect(selection.format == formats[1])
        #expect(selection.formatIndex == 1)
        #expect(selection.dimensions == size(1280, 720))
        #expect(selection.distance == 100)
        #expect(selection.fps == 25)
        #expect(selection.explanation.first == "candidates: 2 (pixel formats the capturer can convert)")
        #expect(selection.explanation.contains("distance: 100 < 780 (NV12 1280x720 vs YUYV 640x480)"))
        #expect(selection.explanation.last == "frame rate: 25 (highest listed rate <= 30)")
    }

    struct Snap: Sendable, CustomTestStringConvertible {
        var size: FrameSize
        var target: Dimensions
        var expected: Dimensions
        var why: String
        var testDescription: String { why }
    }

    static let stepwise = FrameSize.stepwise(min: size(33, 17), max: size(1921, 1081), step: size(4, 8))

    @Test(
        "stepwise sizes snap to the grid from the minimum, clamped, a tie going to the smaller; continuous clamps",
        arguments: [
            Snap(size: stepwise, target: size(641, 481), expected: size(641, 481), why: "on the grid"),
            Snap(size: stepwise, target: size(642, 482), expected: size(641, 481), why: "nearer the lower step"),
            Snap(size: stepwise, target: size(644, 486), expected: size(645, 489), why: "nearer the upper step"),
            Snap(size: stepwise, target: size(643, 485), expected: size(641, 481), why: "tie → smaller"),
            Snap(size: stepwise, target: size(1, 1), expected: size(33, 17), why: "clamped up to the minimum"),
            Snap(size: stepwise, target: size(5000, 5000), expected: size(1921, 1081), why: "clamped to the maximum"),
            Snap(
                size: .stepwise(min: size(16, 16), max: size(1918, 1082), step: size(4, 4)),
                target: size(1920, 1080), expected: size(1916, 1080),
                why: "the maximum is off the grid: the last grid point below it"),
            Snap(
                size: .stepwise(min: size(32, 32), max: size(2592, 1944), step: size(2, 2)),
                target: size(1280, 720), expected: size(1280, 720), why: "bcm2835: every even size"),
            Snap(
                size: .stepwise(min: size(32, 32), max: size(2592, 1944), step: size(1, 1)),
                target: size(1281, 721), expected: size(1281, 721), why: "step 1"),
            Snap(
                size: .stepwise(min: size(32, 32), max: size(2592, 1944), step: size(0, 0)),
                target: size(1281, 721), expected: size(1281, 721), why: "step 0 behaves as step 1"),
            Snap(
                size: .continuous(min: size(16, 16), max: size(1920, 1080)),
                target: size(1001, 577), expected: size(1001, 577), why: "continuous: any size in range"),
            Snap(
                size: .continuous(min: size(16, 16), max: size(1920, 1080)),
                target: size(8, 4000), expected: size(16, 1080), why: "continuous: clamped"),
            Snap(
                size: .discrete(size(640, 480)), target: size(1, 1), expected: size(640, 480),
                why: "discrete: its size"),
        ])
    func snapping(_ c: Snap) throws {
        #expect(c.size.nearest(to: c.target) == c.expected)
        #expect(c.size.contains(c.expected))
        let selection = try #require(
            select(
                [CaptureFormat(pixelFormat: .yuyv, size: c.size, frameRates: .none)], c.target.width, c.target.height))
        #expect(selection.dimensions == c.expected)
        #expect(selection.distance == c.expected.distance(to: c.target))
    }

    @Test("a range entry competes with the size it can give")
    func rangeCompetes() throws {
        let formats = [
            CaptureFormat(.mjpg, 1280, 720, fps: [30]),
            CaptureFormat(
                pixelFormat: .yuyv, size: .stepwise(min: size(32, 32), max: size(2592, 1944), step: size(2, 2)),
                frameRates: .none),
        ]
        let exact = try #require(select(formats, 1000, 562))
        #expect(exact.pixelFormat == .yuyv)
        #expect(exact.dimensions == size(1000, 562))
        // Both reach 1280x720 exactly; the range has no listed rate, so it gets the limit (30): a rate tie, then
        // YUYV ranks before MJPG.
        let tie = try #require(select(formats, 1280, 720))
        #expect(tie.pixelFormat == .yuyv)
        #expect(tie.decidingRule == .preference)
    }

    @Test("FrameSize.contains")
    func contains() {
        #expect(Self.stepwise.contains(size(37, 25)))
        #expect(!Self.stepwise.contains(size(38, 25)))
        #expect(!Self.stepwise.contains(size(37, 26)))
        #expect(!Self.stepwise.contains(size(29, 17)))
        #expect(!Self.stepwise.contains(size(1925, 17)))
        #expect(FrameSize.continuous(min: size(2, 2), max: size(4, 4)).contains(size(3, 3)))
        #expect(!FrameSize.continuous(min: size(2, 2), max: size(4, 4)).contains(size(5, 3)))
        #expect(FrameSize.discrete(size(2, 2)).contains(size(2, 2)))
        #expect(!FrameSize.discrete(size(2, 2)).contains(size(2, 3)))
        #expect(Self.stepwise.maximum == size(1921, 1081))
        #expect(Self.stepwise.description == "33x17 - 1921x1081 with step 4/8")
        #expect(FrameSize.continuous(min: size(2, 2), max: size(4, 4)).description == "2x2 - 4x4")
    }
}
