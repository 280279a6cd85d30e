import CaptureCore
import CaptureFileCameras
import CaptureTestSupport
import Foundation
import Testing

@Suite("Model values")
struct ModelTests {
    @Test(
        "Dimensions(parsing:)",
        arguments: [
            ("1280x720", Dimensions?.some(size(1280, 720))), ("1280X720", size(1280, 720)), ("1x1", size(1, 1)),
            ("0x720", nil), ("-1x5", nil), ("1280x", nil), ("x720", nil), ("1280x720x3", nil), ("abc", nil),
            ("", nil), (" 1280x720", nil), ("1280*720", nil), ("1280.5x720", nil),
        ])
    func parsing(_ text: String, _ expected: Dimensions?) {
        #expect(Dimensions(parsing: text) == expected)
        if let expected { #expect(Dimensions(parsing: expected.description) == expected) }
    }

    @Test("Dimensions distance and area")
    func distance() {
        #expect(size(1920, 1080).distance(to: size(1920, 720)) == 360)
        #expect(size(1920, 720).distance(to: size(1920, 1080)) == 360)
        #expect(size(640, 480).distance(to: size(1280, 720)) == 880)
        #expect(size(1280, 720).area == 921_600)
    }

    @Test("every FourCC in vivid's list round-trips through its printed form, including '-BE'")
    func fourCCRoundTrip() throws {
        let list = try V4L2FormatList.parse(Fixtures.text("devices/vivid.txt"))
        for format in list.pixelFormats.map(\.pixelFormat) {
            let printed = format.fourCC
            let parsed: PixelFormat? =
                printed.hasSuffix("-BE")
                ? PixelFormat(fourCC: printed.dropLast(3)).map { PixelFormat(rawValue: $0.rawValue | 1 << 31) }
                : PixelFormat(fourCC: printed)
            #expect(parsed == format, "\(printed)")
            let json = try JSONEncoder().encode(format)
            #expect(try JSONDecoder().decode(PixelFormat.self, from: json) == format)
            #expect(String(decoding: json, as: UTF8.self) == "\"\(printed)\"")
        }
        #expect(list.pixelFormats.contains { $0.pixelFormat.fourCC == "XR15-BE" })
    }

    @Test(
        "PixelFormat(fourCC:) codes and failures",
        arguments: [
            ("YUYV", UInt32?.some(0x5659_5559)), ("NV12", 0x3231_564E), ("MJPG", 0x4750_4A4D), ("Y16", 0x2036_3159),
            ("Y16 ", 0x2036_3159), ("", nil), ("TOOLONG", nil), ("é", nil), ("A\u{7F}", nil),
        ])
    func fourCC(_ text: String, _ raw: UInt32?) {
        #expect(PixelFormat(fourCC: text)?.rawValue == raw)
    }

    @Test("well-known pixel formats print their FourCC; '-BE' decodes from JSON")
    func known() throws {
        #expect(PixelFormat.yu12.fourCC == "YU12")
        #expect(PixelFormat.xr24.description == "XR24")
        #expect(PixelFormat(rawValue: 0x2036_3159 | 1 << 31).fourCC == "Y16 -BE")
        let decoded = try JSONDecoder().decode(PixelFormat.self, from: Data("\"Y16 -BE\"".utf8))
        #expect(decoded.rawValue == 0x2036_3159 | 1 << 31)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(PixelFormat.self, from: Data("\"TOOLONG\"".utf8))
        }
        #expect(PixelFormat.mjpg.isCompressed && !PixelFormat.yuyv.isCompressed)
    }

    @Test("PixelFormatFlags carry the videodev2.h bit values")
    func flagValues() {
        #expect(PixelFormatFlags.compressed.rawValue == 0x0001)
        #expect(PixelFormatFlags.emulated.rawValue == 0x0002)
        #expect(PixelFormatFlags.continuousBytestream.rawValue == 0x0004)
        #expect(PixelFormatFlags.dynamicResolution.rawValue == 0x0008)
        #expect(PixelFormatFlags.encoderCapFrameInterval.rawValue == 0x0010)
        #expect(PixelFormatFlags.cscColorspace.rawValue == 0x0020)
        #expect(PixelFormatFlags.cscTransferFunction.rawValue == 0x0040)
        #expect(PixelFormatFlags.cscYCbCr.rawValue == 0x0080)
        #expect(PixelFormatFlags.cscQuantization.rawValue == 0x0100)
        #expect(PixelFormatFlags.metaLineBased.rawValue == 0x0200)
    }

    static func roundTrip<T: Codable & Equatable>(_ value: T) throws {
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(T.self, from: data) == value)
    }

    @Test(
        "Codable round trips of the model",
        arguments: [
            "vivid.txt", "interval-ranges.txt", "stepwise-bcm2835.txt",
            "continuous.txt",
        ])
    func codable(_ file: String) throws {
        let list = try V4L2FormatList.parse(Fixtures.text("devices/" + file))
        try Self.roundTrip(list)
        var device = list.device(id: "recorded:\(file)", name: file, position: .back)
        device.sensorRotation = .degrees270
        device.driver = "uvcvideo"
        device.bus = "usb-0000:00:14.0-1"
        try Self.roundTrip(device)
        for format in list.formats.prefix(20) { try Self.roundTrip(format) }
        for description in list.pixelFormats { try Self.roundTrip(description) }
    }

    @Test("Codable round trips of requests, selections and rotations")
    func codableRules() throws {
        let request = FormatRequest(target: size(1920, 720), fpsLimit: 12.5, preference: [.mjpg, .nv12])
        try Self.roundTrip(request)
        let selection = try #require(
            CaptureRules.selectFormat(
                from: [CaptureFormat(.yuyv, 640, 480, fps: [30]), CaptureFormat(.nv12, 640, 480, fps: [30])],
                for: request, canConvert: { _ in true }))
        try Self.roundTrip(selection)
        for rotation in VideoRotation.allCases { try Self.roundTrip(rotation) }
        for orientation in DeviceOrientation.allCases { try Self.roundTrip(orientation) }
        for position in CameraPosition.allCases { try Self.roundTrip(position) }
        try Self.roundTrip(GrantedFormat(pixelFormat: .mjpg, dimensions: size(1280, 720), fps: 30, bytesPerLine: 0))
        try Self.roundTrip(FrameRates.stepwise(min: .init(fps: 30), max: .init(fps: 1), step: .init(fps: 30)))
        try Self.roundTrip(FrameSize.continuous(min: size(16, 16), max: size(1920, 1080)))
    }

    @Test("CaptureDevice derives its pixel-format list from its formats when none is given")
    func derivedPixelFormats() {
        let device = CaptureDevice(
            id: "x", name: "x", kind: .recorded,
            formats: [
                CaptureFormat(.mjpg, 1, 1, fps: []), CaptureFormat(.yuyv, 1, 1, fps: []),
                CaptureFormat(.mjpg, 2, 2, fps: []),
            ])
        #expect(device.pixelFormats.map(\.pixelFormat) == [.mjpg, .yuyv])
        #expect(device.description == "x (x)")
        // The format list of such a device renders one entry per pixel format, each with its sizes.
        #expect(V4L2FormatList(device).entries.map(\.formats.count) == [2, 1])
    }
}
