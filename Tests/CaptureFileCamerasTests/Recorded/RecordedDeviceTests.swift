import CaptureCore
import CaptureFileCameras
import CaptureTestSupport
import Foundation
import SystemPackage
import Testing

private func size(_ width: Int, _ height: Int) -> Dimensions { Dimensions(width: width, height: height) }

@Suite("Recorded devices")
struct RecordedDeviceTests {
    @Test("load(path:) describes the dump as a recorded device")
    func load() throws {
        let path = Fixtures.url("devices/uvc-c920.txt").path
        let recorded = try RecordedDevice.load(path: path, position: .front)
        let device = recorded.device
        #expect(device.id == "recorded:uvc-c920.txt")
        #expect(device.name == "uvc-c920")
        #expect(device.kind == .recorded)
        #expect(device.node == path)
        #expect(device.driver == "recorded")
        #expect(device.position == .front)
        let list = try V4L2FormatList.parse(Fixtures.text("devices/uvc-c920.txt"))
        #expect(recorded.formatList == list)
        #expect(device.formats == list.formats)
        #expect(device.pixelFormats == list.pixelFormats)
        #expect(try RecordedDevice.load(path: path, name: "Webcam").device.name == "Webcam")
    }

    @Test("init(name:text:) gives the id recorded:<name>")
    func fromText() throws {
        let recorded = try RecordedDevice(name: "m1", text: Fixtures.text("devices/macbook-m1.txt"))
        #expect(recorded.device.id == "recorded:m1")
        #expect(recorded.device.formats.count == 7)
        #expect(recorded.device.position == .unspecified)
    }

    @Test("a missing file is deviceNotFound, a folder ioFailure, bad text malformedFormatList naming the file")
    func errors() throws {
        let missing = try #require(throws: CaptureError.self) {
            try RecordedDevice.load(path: Fixtures.url("devices/no-such-camera.txt").path)
        }
        #expect(missing.code == .deviceNotFound)
        #expect(missing.errno == .noSuchFileOrDirectory)
        #expect(missing.call == "open")

        let folder = try #require(throws: CaptureError.self) {
            try RecordedDevice.load(path: Fixtures.url("devices").path)
        }
        #expect(folder.code == .ioFailure)
        #expect(folder.errno == .isDirectory)

        let malformedPath = Fixtures.url("devices/malformed/bad-size.txt").path
        let malformed = try #require(throws: CaptureError.self) { try RecordedDevice.load(path: malformedPath) }
        #expect(malformed.code == .malformedFormatList)
        #expect(malformed.device == malformedPath)
        #expect(malformed.message == "line 6: bad discrete size: Size: Discrete 640by480")
        #expect(malformed.description.hasPrefix(malformedPath + ": line 6"))

        let fromText = try #require(throws: CaptureError.self) { try RecordedDevice(name: "cam", text: "hello") }
        #expect(fromText.device == "recorded:cam")
        #expect(fromText.message == "line 1: unrecognised line: hello")
    }

    @Test("a file that is not UTF-8 is malformedFormatList")
    func notUTF8() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "recorded-\(UInt64.random(in: 0...UInt64.max)).txt"
        ).path
        try Data([0x5B, 0x30, 0x5D, 0xFF, 0xFE, 0x0A]).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let error = try #require(throws: CaptureError.self) { try RecordedDevice.load(path: path) }
        #expect(error.code == .malformedFormatList)
        #expect(error.message == "the file is not UTF-8 text")
    }

    @Test("CameraProvider.recorded lists the devices in order, as recorded, converting every pixel format")
    func provider() throws {
        let webcam = try RecordedDevice(name: "c920", text: Fixtures.text("devices/uvc-c920.txt")).device
        var ir = try RecordedDevice(name: "ir", text: Fixtures.text("devices/ir-grey-bayer.txt")).device
        ir.kind = .v4l2
        let provider = CameraProvider.recorded([webcam, ir])
        #expect(provider.devices().map(\.id) == ["recorded:c920", "recorded:ir"])
        #expect(provider.devices().allSatisfy { $0.kind == .recorded })
        let listed = provider.devices()[1]
        for format in [PixelFormat.grey, .mjpg, .h264, .yuyv] {
            #expect(provider.canConvert(format, on: listed))
        }
        #expect(!provider.canConvert(.grey, on: SyntheticCamera.device()))
        #expect(CameraProvider.recorded([]).devices().isEmpty)
    }

    @Test("the backend refuses unknown devices, unlisted formats and sizes outside the format")
    func sessionChecks() async throws {
        let device = try RecordedDevice(name: "bcm", text: Fixtures.text("devices/stepwise-bcm2835.txt")).device
        let backend = RecordedBackend([device])
        let events = CaptureSessionEvents(frame: { _, _ in }, dropped: { _ in }, ended: { _ in })
        let format = device.formats[0]
        func configuration(
            _ device: CaptureDevice, _ format: CaptureFormat, _ size: Dimensions
        ) -> CaptureSessionConfiguration {
            CaptureSessionConfiguration(device: device, format: format, dimensions: size, fps: 30, output: .nv12)
        }
        var stranger = device
        stranger.id = "recorded:other"
        let unknown = try #require(throws: CaptureError.self) {
            try backend.makeSession(configuration(stranger, format, size(640, 480)), events: events)
        }
        #expect(unknown.code == .deviceNotFound)
        let unlisted = try #require(throws: CaptureError.self) {
            try backend.makeSession(
                configuration(device, CaptureFormat(.nv12, 640, 480, fps: [30]), size(640, 480)), events: events)
        }
        #expect(unlisted.code == .formatNotSupported)
        let offGrid = try #require(throws: CaptureError.self) {
            try backend.makeSession(configuration(device, format, size(641, 480)), events: events)
        }
        #expect(offGrid.code == .formatNotSupported)
        let session = try backend.makeSession(configuration(device, format, size(642, 480)), events: events)
        #expect(session.granted.dimensions == size(642, 480))
        #expect(session.granted.pixelFormat == format.pixelFormat)
        await session.stop()
    }

    @Test("a capturer streams synthetic frames in the format the rules select on a recorded webcam")
    func capture() async throws {
        let webcam = try RecordedDevice.load(path: Fixtures.url("devices/uvc-c920.txt").path, position: .front)
        let capturer = CameraVideoCapturer(provider: .recorded([webcam.device]))
        capturer.isPaced = false
        let frames = capturer.frames(bufferingNewest: 4)
        let configuration = try await capturer.startCapture(target: size(1280, 720))
        #expect(configuration.device.id == "recorded:uvc-c920.txt")
        #expect(configuration.format.pixelFormat == .mjpg)
        #expect(configuration.granted.pixelFormat == .mjpg)
        #expect(configuration.granted.dimensions == size(1280, 720))
        #expect(configuration.granted.fps == 30)
        var received = 0
        for await frame in frames {
            #expect(frame.dimensions == size(1280, 720))
            #expect(frame.buffer.format == .nv12)
            received += 1
            if received == 3 { break }
        }
        await capturer.stopCapture()
        #expect(received == 3)
    }

    @Test("a size range: the capturer gets the snapped size it asked for")
    func captureStepwise() async throws {
        let device = try RecordedDevice(name: "bcm", text: Fixtures.text("devices/stepwise-bcm2835.txt")).device
        let capturer = CameraVideoCapturer(provider: .recorded([device]))
        capturer.isPaced = false
        capturer.outputPixelFormat = .i420
        let frames = capturer.frames()
        let configuration = try await capturer.startCapture(device: device, target: size(1001, 563))
        #expect(configuration.format.pixelFormat == .nv12)
        #expect(configuration.granted.dimensions == size(1000, 562))
        for await frame in frames {
            #expect(frame.dimensions == size(1000, 562))
            #expect(frame.buffer.format == .i420)
            break
        }
        await capturer.stopCapture()
    }
}
