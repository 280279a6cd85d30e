import CaptureCore
import Testing

@Suite("Frame-rate rule")
struct FrameRateRuleTests {
    static func rates(_ fps: [Double]) -> FrameRates {
        // Exact intervals for the rates used here: whole, 12.5 (2/25), 7.5 (2/15), 29.97 (1001/30000).
        .discrete(
            fps.map { fps in
                switch fps {
                case 12.5: FrameInterval(numerator: 2, denominator: 25)
                case 7.5: FrameInterval(numerator: 2, denominator: 15)
                case 29.97: FrameInterval(numerator: 1001, denominator: 30000)
                default: FrameInterval(fps: UInt32(fps))
                }
            })
    }

    @Test(
        "discrete: the highest listed rate ≤ the limit; all above → the lowest listed",
        arguments: [
            ([30.0, 15, 5], 30.0, 30.0),
            ([30, 15, 5], 20, 15),
            ([5, 15, 30], 20, 15),  // order does not matter
            ([30, 15, 5], 5, 5),
            ([30, 15, 5], 4, 5),  // all above: the lowest
            ([60, 50], 30, 50),
            ([30, 15, 5], 1000, 30),
            ([12.5, 25], 20, 12.5),
            ([12.5, 25], 12.5, 12.5),
            ([7.5, 5], 10, 7.5),
            ([30, 24, 20, 15, 10, 7.5, 5], 8, 7.5),
            ([30, 15], 29.97, 15),  // 30 is above 29.97
        ])
    func discrete(_ listed: [Double], _ limit: Double, _ expected: Double) {
        #expect(CaptureRules.frameRate(for: Self.rates(listed), limit: limit) == expected)
    }

    @Test("29.97 (1001/30000) is below a limit of 30, and above a limit of 29.97 by 3e-5")
    func ntsc() {
        let rate = CaptureRules.frameRate(for: Self.rates([29.97, 15]), limit: 30)
        #expect(abs(rate - 30000.0 / 1001.0) < 1e-12)
        // 30000/1001 = 29.97003 > 29.97: the rule then falls to 15 (documented behaviour of the exact comparison).
        #expect(CaptureRules.frameRate(for: Self.rates([29.97, 15]), limit: 29.97) == 15)
        #expect(CaptureRules.frameRate(for: Self.rates([29.97]), limit: 29.97) == 30000.0 / 1001.0)
    }

    @Test(
        "ranges: the limit clamped into the range",
        arguments: [
            (FrameRates.continuous(min: .init(fps: 30), max: .init(fps: 1)), 20.0, 20.0),
            (.continuous(min: .init(fps: 30), max: .init(fps: 1)), 60, 30),
            (.continuous(min: .init(fps: 30), max: .init(fps: 1)), 0.5, 1),
            (.stepwise(min: .init(fps: 60), max: .init(fps: 2), step: .init(fps: 60)), 25, 25),
            (.stepwise(min: .init(fps: 60), max: .init(fps: 2), step: .init(fps: 60)), 90, 60),
            (.continuous(min: .init(numerator: 2, denominator: 25), max: .init(fps: 1)), 30, 12.5),
        ])
    func ranges(_ rates: FrameRates, _ limit: Double, _ expected: Double) {
        #expect(CaptureRules.frameRate(for: rates, limit: limit) == expected)
    }

    @Test("no rate listed: the limit", arguments: [30.0, 12.5, 1])
    func none(_ limit: Double) {
        #expect(CaptureRules.frameRate(for: .none, limit: limit) == limit)
        #expect(CaptureRules.frameRate(for: .discrete([.init(numerator: 0, denominator: 1)]), limit: limit) == limit)
    }

    @Test("the selection uses the rule and explains which case applied")
    func explained() throws {
        let above = try #require(select([CaptureFormat(.yuyv, 640, 480, fps: [60, 50])], 640, 480))
        #expect(above.fps == 50)
        #expect(above.explanation.last == "frame rate: 50 (every listed rate is above the limit: the lowest)")
        let none = try #require(select([CaptureFormat(.yuyv, 640, 480, fps: [])], 640, 480, fpsLimit: 12.5))
        #expect(none.fps == 12.5)
        #expect(none.explanation.last == "frame rate: 12.5 (no rate listed: the limit)")
        let range = try #require(
            select(
                [
                    CaptureFormat(
                        pixelFormat: .yuyv, size: .discrete(size(640, 480)),
                        frameRates: .continuous(min: .init(fps: 30), max: .init(fps: 1)))
                ], 640, 480, fpsLimit: 24))
        #expect(range.fps == 24)
        #expect(range.explanation.last == "frame rate: 24 (the limit clamped into the listed range)")
    }

    @Test("FrameRates.maximumFPS / minimumFPS and FrameInterval figures")
    func figures() {
        #expect(Self.rates([30, 15, 5]).maximumFPS == 30)
        #expect(Self.rates([30, 15, 5]).minimumFPS == 5)
        #expect(FrameRates.none.maximumFPS == nil)
        #expect(FrameRates.continuous(min: .init(fps: 30), max: .init(fps: 1)).maximumFPS == 30)
        #expect(FrameRates.continuous(min: .init(fps: 30), max: .init(fps: 1)).minimumFPS == 1)
        #expect(FrameInterval(numerator: 2, denominator: 25).fps == 12.5)
        #expect(FrameInterval(numerator: 2, denominator: 25).seconds == 0.08)
        #expect(FrameInterval(numerator: 0, denominator: 25).fps == 0)
        #expect(FrameInterval(numerator: 1, denominator: 0).seconds == 0)
        #expect(FrameInterval(numerator: 1001, denominator: 30000).description == "1001/30000")
    }
}
