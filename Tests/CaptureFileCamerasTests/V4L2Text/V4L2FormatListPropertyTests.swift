import CaptureCore
import CaptureFileCameras
import CaptureTestSupport
import Testing

@Suite("Format list properties")
struct V4L2FormatListPropertyTests {
    static func randomInterval(_ g: inout SeededGenerator) -> FrameInterval {
        FrameInterval(
            numerator: UInt32.random(in: 1...2000, using: &g), denominator: UInt32.random(in: 1...120_000, using: &g))
    }

    static func randomList(_ g: inout SeededGenerator) -> V4L2FormatList {
        let codes = ["YUYV", "MJPG", "NV12", "Y16 ", "GREY", "HSV3", "BA81", "RGB3"]
        var entries: [V4L2FormatList.Entry] = []
        for _ in 0..<Int.random(in: 0...4, using: &g) {
            var pixelFormat = PixelFormat(fourCC: codes.randomElement(using: &g) ?? "YUYV") ?? .yuyv
            if Bool.random(using: &g) && Bool.random(using: &g) {
                pixelFormat = PixelFormat(rawValue: pixelFormat.rawValue | 1 << 31)
            }
            let flags = PixelFormatFlags(rawValue: UInt32.random(in: 0...0xFFFF, using: &g) & 0x83FF)
            var formats: [CaptureFormat] = []
            for _ in 0..<Int.random(in: 0...3, using: &g) {
                let w = Int.random(in: 1...4096, using: &g), h = Int.random(in: 1...4096, using: &g)
                switch Int.random(in: 0...5, using: &g) {
                case 0:
                    formats.append(
                        CaptureFormat(
                            pixelFormat: pixelFormat,
                            size: .stepwise(
                                min: Dimensions(width: 1, height: 1), max: Dimensions(width: w, height: h),
                                step: Dimensions(width: Int.random(in: 1...16, using: &g), height: 2)),
                            frameRates: .none))
                case 1:
                    formats.append(
                        CaptureFormat(
                            pixelFormat: pixelFormat,
                            size: .continuous(
                                min: Dimensions(width: 2, height: 2), max: Dimensions(width: w, height: h)),
                            frameRates: .none))
                case 2:
                    formats.append(
                        CaptureFormat(
                            pixelFormat: pixelFormat, size: .discrete(Dimensions(width: w, height: h)),
                            frameRates: .continuous(min: randomInterval(&g), max: randomInterval(&g))))
                case 3:
                    formats.append(
                        CaptureFormat(
                            pixelFormat: pixelFormat, size: .discrete(Dimensions(width: w, height: h)),
                            frameRates: .stepwise(
                                min: randomInterval(&g), max: randomInterval(&g), step: randomInterval(&g))))
                default:
                    let intervals = (0..<Int.random(in: 0...5, using: &g)).map { _ in randomInterval(&g) }
                    formats.append(
                        CaptureFormat(
                            pixelFormat: pixelFormat, size: .discrete(Dimensions(width: w, height: h)),
                            frameRates: .discrete(intervals)))
                }
            }
            entries.append(
                .init(
                    pixelFormat: PixelFormatDescription(
                        pixelFormat: pixelFormat, description: "Format, number \(entries.count)",
                        flags: flags),
                    formats: formats))
        }
        return V4L2FormatList(
            bufferType: Bool.random(using: &g) ? "Video Capture" : "Video Capture Multiplanar",
            entries: entries)
    }

    @Test("render → parse → render is stable for random lists", arguments: 0..<200)
    func stable(_ seed: Int) throws {
        var g = SeededGenerator(state: UInt64(seed))
        let list = Self.randomList(&g)
        let text = list.render()
        let parsed = try V4L2FormatList.parse(text)
        #expect(parsed.render() == text)
        #expect(parsed.pixelFormats == list.pixelFormats)
        #expect(parsed.formats.map(\.size) == list.formats.map(\.size))
    }

    @Test("cut or corrupted dumps parse or throw malformedFormatList, never crash", arguments: 0..<100)
    func damaged(_ seed: Int) throws {
        var g = SeededGenerator(state: UInt64(seed) &+ 1000)
        var bytes = Array(try Fixtures.text("devices/uvc-c920.txt").utf8)
        bytes.removeLast(Int.random(in: 0..<bytes.count, using: &g))
        for _ in 0..<Int.random(in: 0...3, using: &g) where !bytes.isEmpty {
            bytes[Int.random(in: 0..<bytes.count, using: &g)] = UInt8.random(in: 0x20...0x7E, using: &g)
        }
        do {
            _ = try V4L2FormatList.parse(String(decoding: bytes, as: UTF8.self))
        } catch {
            #expect(error.code == .malformedFormatList)
            #expect(error.message.hasPrefix("line "))
        }
    }
}
