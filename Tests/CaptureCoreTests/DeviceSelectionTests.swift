import CaptureCore
import Testing

@Suite("Device rule")
struct DeviceSelectionTests {
    static func device(_ id: String, _ position: CameraPosition, _ formats: [PixelFormat]) -> CaptureDevice {
        CaptureDevice(
            id: id, name: id, kind: .recorded, position: position,
            formats: formats.map { CaptureFormat($0, 640, 480, fps: [30]) })
    }

    static let devices = [
        device("grey-front", .front, [.grey]),  // no usable format
        device("back", .back, [.yuyv]),
        device("front-1", .front, [.grey, .mjpg]),
        device("front-2", .front, [.nv12]),
        device("external", .external, [.yuyv]),
        device("empty", .unspecified, []),
    ]

    @Test(
        "the first usable device at the position, else the first usable device",
        arguments: [
            (CameraPosition.front, "front-1"),
            (.back, "back"),
            (.external, "external"),
            (.unspecified, "back"),  // no usable unspecified camera: the first usable one
        ])
    func position(_ position: CameraPosition, _ expected: String) {
        #expect(
            CaptureRules.selectDevice(from: Self.devices, position: position, canConvert: convertible.contains)?.id
                == expected)
    }

    @Test("the default position is front")
    func defaultFront() {
        #expect(CaptureRules.selectDevice(from: Self.devices, canConvert: convertible.contains)?.id == "front-1")
    }

    @Test("devices without a usable format are skipped; none usable gives nil")
    func skipped() {
        #expect(
            CaptureRules.selectDevice(from: [Self.devices[0], Self.devices[5]], canConvert: convertible.contains)
                == nil)
        #expect(CaptureRules.selectDevice(from: [], canConvert: { _ in true }) == nil)
        #expect(
            CaptureRules.selectDevice(from: Self.devices, position: .front, canConvert: { $0 == .grey })?.id
                == "grey-front")
        #expect(
            CaptureRules.selectDevice(from: Self.devices, position: .back, canConvert: { $0 == .nv12 })?.id
                == "front-2")
    }
}
