internal import CV4L2
import CaptureCore
import SystemPackage
import Testing

@testable import CaptureV4L2

/// Which nodes the backend lists, and how it names and identifies them (no hardware).
@Suite("V4L2 discovery")
struct DiscoveryTests {
    @Test("metadata, output-only and non-streaming nodes and nodes with no convertible format are left out")
    func filtering() {
        var metadata = FakeCamera.webcam()
        metadata.capabilities |= UInt32(V4L2_CAP_META_CAPTURE)  // UVC: the whole device can capture video...
        metadata.deviceCaps = UInt32(V4L2_CAP_META_CAPTURE | V4L2_CAP_STREAMING)  // ...but this node cannot.
        var noStreaming = FakeCamera.webcam()
        noStreaming.deviceCaps = UInt32(V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_READWRITE)
        var rawOnly = FakeCamera.webcam()
        rawOnly.formats.removeFirst()  // H.264 only: not convertible.
        let driver = FakeV4L2Driver(devices: [
            "/dev/video0": FakeCamera.webcam(), "/dev/video1": metadata, "/dev/video2": noStreaming,
            "/dev/video3": rawOnly,
        ])
        #expect(FakeCamera.backend(driver).devices().map(\.node) == ["/dev/video0"])
        #expect(driver.nothingLeaked)
    }

    @Test("without V4L2_CAP_DEVICE_CAPS the capabilities field decides")
    func legacyCapabilities() {
        var legacy = FakeCamera.webcam()
        legacy.deviceCaps = nil
        let driver = FakeV4L2Driver(devices: ["/dev/video0": legacy])
        #expect(FakeCamera.backend(driver).devices().count == 1)
    }

    @Test("devices are sorted by node number, not by name")
    func ordering() {
        var devices: [String: FakeV4L2Driver.Device] = [:]
        for (index, node) in ["/dev/video10", "/dev/video2", "/dev/video1"].enumerated() {
            var device = FakeCamera.webcam()
            device.bus = "usb-\(index)"
            devices[node] = device
        }
        let driver = FakeV4L2Driver(devices: devices)
        #expect(FakeCamera.backend(driver).devices().map(\.node) == ["/dev/video1", "/dev/video2", "/dev/video10"])
    }

    @Test("the id is the by-id link name where one exists, else the bus; nodes sharing a bus get distinct ids")
    func identity() throws {
        var second = FakeCamera.webcam()
        second.bus = "platform:vivid-000"
        var third = second
        third.card = "Another"
        let driver = FakeV4L2Driver(devices: [
            "/dev/video0": FakeCamera.webcam(), "/dev/video2": second, "/dev/video4": third,
        ])
        driver.link("usb-Acme_Cam_123-video-index0", to: "/dev/video0")
        let devices = FakeCamera.backend(driver).devices()
        #expect(
            devices.map(\.id) == ["usb-Acme_Cam_123-video-index0", "platform:vivid-000", "platform:vivid-000#video4"])
        #expect(try FakeCamera.backend(driver).scanner.describe("/dev/video4").id == "platform:vivid-000#video4")
        #expect(driver.nothingLeaked)
    }

    @Test(
        "position comes from V4L2_CID_CAMERA_ORIENTATION and rotation from V4L2_CID_CAMERA_SENSOR_ROTATION",
        arguments: [(Int32?(0), CameraPosition.front), (1, .back), (2, .external), (nil, .unspecified)])
    func position(orientation: Int32?, expected: CameraPosition) throws {
        var device = FakeCamera.webcam()
        if let orientation { device.controls[CV4L2_CID_CAMERA_ORIENTATION] = orientation }
        device.controls[CV4L2_CID_CAMERA_SENSOR_ROTATION] = 270
        let driver = FakeV4L2Driver(devices: ["/dev/video0": device])
        let described = try FakeCamera.backend(driver).scanner.describe("/dev/video0")
        #expect(described.position == expected)
        #expect(described.sensorRotation == .degrees270)
    }

    @Test("describe: missing node, permission denied, not a capture node")
    func describeErrors() {
        var output = FakeCamera.webcam()
        output.deviceCaps = UInt32(V4L2_CAP_VIDEO_OUTPUT | V4L2_CAP_STREAMING)
        let driver = FakeV4L2Driver(devices: ["/dev/video0": output, "/dev/video1": FakeCamera.webcam()])
        driver.failOpen("/dev/video1", with: .permissionDenied)
        let scanner = FakeCamera.backend(driver).scanner
        #expect(throws: CaptureError.self) { try scanner.describe("/dev/video9") }
        do {
            _ = try scanner.describe("/dev/video9")
        } catch {
            #expect(error.code == .deviceNotFound)
            #expect(error.device == "/dev/video9")
            #expect(error.call == "open")
        }
        do {
            _ = try scanner.describe("/dev/video1")
        } catch {
            #expect(error.code == .permissionDenied)
            #expect(error.message.contains("video"))
            #expect(error.errno == .permissionDenied)
        }
        do {
            _ = try scanner.describe("/dev/video0")
        } catch {
            #expect(error.code == .notACaptureDevice)
        }
        #expect(driver.nothingLeaked)
    }
}
