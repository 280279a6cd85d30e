import CaptureCore
import CaptureFileCameras
import Testing

@Suite("Printed interval figures back to exact fractions")
struct FrameIntervalRecoveryTests {
    static func parseInterval(_ figures: String) throws -> FrameRates {
        try V4L2FormatList.parse("[0]: 'YUYV' (x)\nSize: Discrete 1x1\nInterval: " + figures).formats[0].frameRates
    }

    @Test(
        "the simplest fraction reproducing both figures",
        arguments: [
            ("Discrete 0.033s (30.000 fps)", FrameInterval(numerator: 1, denominator: 30)),
            ("Discrete 0.080s (12.500 fps)", FrameInterval(numerator: 2, denominator: 25)),
            ("Discrete 0.133s (7.500 fps)", FrameInterval(numerator: 2, denominator: 15)),
            ("Discrete 0.042s (24.000 fps)", FrameInterval(numerator: 1, denominator: 24)),
            ("Discrete 0.042s (23.976 fps)", FrameInterval(numerator: 1001, denominator: 24000)),
            ("Discrete 0.033s (29.970 fps)", FrameInterval(numerator: 1001, denominator: 30000)),
            ("Discrete 0.017s (59.940 fps)", FrameInterval(numerator: 1001, denominator: 60000)),
            ("Discrete 1.000s (1.000 fps)", FrameInterval(numerator: 1, denominator: 1)),
            ("Discrete 2.000s (0.500 fps)", FrameInterval(numerator: 2, denominator: 1)),
            ("Discrete 0.008s (120.000 fps)", FrameInterval(numerator: 1, denominator: 120)),
            ("Discrete 3600.000s (0.000 fps)", FrameInterval(numerator: 3600, denominator: 1)),
            ("Discrete 0.000s (5000.000 fps)", FrameInterval(numerator: 1, denominator: 5000)),
            ("Discrete 0.033s (29.969 fps)", FrameInterval(numerator: 32, denominator: 959)),
            ("Discrete 0.030s (33.333 fps)", FrameInterval(numerator: 3, denominator: 100)),
        ])
    func simplest(_ figures: String, _ expected: FrameInterval) throws {
        #expect(try Self.parseInterval(figures) == .discrete([expected]))
    }

    @Test("each recovered fraction prints the same figures again", arguments: 1...240)
    func reprints(_ fps: Int) throws {
        for numerator in [1, 2, 1001] {
            let interval = FrameInterval(numerator: UInt32(numerator), denominator: UInt32(fps * 1000))
            let line = V4L2FormatList(entries: [
                .init(
                    pixelFormat: .init(pixelFormat: .yuyv, description: "x"),
                    formats: [
                        .init(
                            pixelFormat: .yuyv, size: .discrete(.init(width: 1, height: 1)),
                            frameRates: .discrete([interval]))
                    ])
            ]).render()
            #expect(try V4L2FormatList.parse(line).render() == line)
        }
    }

    @Test("a step printing like the minimum is the minimum")
    func stepLikeMinimum() throws {
        #expect(
            try Self.parseInterval("Stepwise 0.017s - 0.500s with step 0.017s (2.000-60.000 fps)")
                == .stepwise(min: .init(fps: 60), max: .init(fps: 2), step: .init(fps: 60)))
    }

    @Test("a step figure alone: the smallest denominator printing as it")
    func stepOnly() throws {
        #expect(
            try Self.parseInterval("Stepwise 0.000s - 1.000s with step 0.001s (1.000-10000.000 fps)")
                == .stepwise(
                    min: .init(numerator: 1, denominator: 10000), max: .init(fps: 1),
                    step: .init(numerator: 1, denominator: 667)))
        #expect(
            try Self.parseInterval("Stepwise 0.000s - 1.000s with step 0.000s (1.000-10000.000 fps)")
                == .stepwise(
                    min: .init(numerator: 1, denominator: 10000), max: .init(fps: 1),
                    step: .init(numerator: 1, denominator: 10000)))
    }
}
