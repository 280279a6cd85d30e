import CaptureCore

/// A camera that plays a YUV4MPEG2 (`.y4m`) file of 8-bit 4:2:0 frames at the rate in its header, looping or
/// stopping at the end: real clips through the whole capture path, without hardware.
public enum Y4MCamera {
    /// The device description of the file at `path`: one YU12 format at the file's size and rate.
    /// - Throws: `deviceNotFound` for a missing file, `malformedFile` or `formatNotSupported` for a bad header.
    public static func device(path: String) throws(CaptureError) -> CaptureDevice {
        let reader = try Y4MReader(path: path)
        defer { reader.close() }
        let header = reader.header
        let interval = FrameInterval(numerator: header.frameRate.denominator, denominator: header.frameRate.numerator)
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return CaptureDevice(
            id: "y4m:\(path)", name: name, kind: .y4m, position: .external, driver: "y4m", node: path,
            pixelFormats: [PixelFormatDescription(pixelFormat: .yu12, description: "Planar YUV 4:2:0")],
            formats: [
                CaptureFormat(
                    pixelFormat: .yu12, size: .discrete(header.dimensions), frameRates: .discrete([interval]))
            ])
    }
}

/// Serves Y4M files as cameras.
package struct Y4MBackend: CameraBackend {
    package let files: [CaptureDevice]
    package let loop: Bool

    package var kind: CaptureDevice.Kind { .y4m }
    package func devices() -> [CaptureDevice] { files }
    package func canConvert(_ pixelFormat: PixelFormat) -> Bool { pixelFormat == .yu12 }

    package func makeSession(
        _ configuration: CaptureSessionConfiguration, events: CaptureSessionEvents
    ) throws(CaptureError) -> any CaptureSession {
        guard let path = configuration.device.node else {
            throw CaptureError(.deviceNotFound, "the Y4M device has no file", device: configuration.device.id)
        }
        return Y4MSession(path: path, configuration: configuration, events: events, loop: loop)
    }
}

extension CameraProvider {
    /// Cameras playing the Y4M files at `paths`, looping at the end (or ending the capture when `loop` is false).
    /// - Throws: the first file's error (missing, malformed header, not 4:2:0).
    public static func y4m(_ paths: [String], loop: Bool = true) throws(CaptureError) -> CameraProvider {
        var devices: [CaptureDevice] = []
        for path in paths { devices.append(try Y4MCamera.device(path: path)) }
        return CameraProvider(backends: [Y4MBackend(files: devices, loop: loop)])
    }
}

/// Plays one Y4M file on a paced thread.
final class Y4MSession: CaptureSession {
    private let path: String
    private let configuration: CaptureSessionConfiguration
    private let events: CaptureSessionEvents
    private let loopAtEnd: Bool
    private let loop: PacedFrameLoop
    private let reader = Locked<ReaderBox?>(nil)

    init(path: String, configuration: CaptureSessionConfiguration, events: CaptureSessionEvents, loop: Bool) {
        self.path = path
        self.configuration = configuration
        self.events = events
        self.loopAtEnd = loop
        self.loop = PacedFrameLoop(fps: configuration.fps, paced: configuration.paced, name: "y4m-camera")
    }

    var granted: GrantedFormat {
        GrantedFormat(pixelFormat: .yu12, dimensions: configuration.dimensions, fps: configuration.fps)
    }

    func start() async throws(CaptureError) {
        let path = self.path
        let expected = configuration.dimensions
        // Opening the file and reading its header are blocking reads: they run on the blocking executor.
        let box = try await BlockingExecutor.shared.run { () throws(CaptureError) -> ReaderBox in
            let box = ReaderBox(try Y4MReader(path: path))
            guard box.reader.header.dimensions == expected else {
                box.reader.close()
                throw CaptureError(
                    .formatNotSupported, "the file is \(box.reader.header.dimensions), not \(expected)", device: path)
            }
            return box
        }
        reader.withLock { $0 = box }
        let pool = FrameBufferPool(format: configuration.output, dimensions: configuration.dimensions, capacity: 8)
        let events = self.events
        let loopAtEnd = self.loopAtEnd
        loop.start { _, captureTime in
            do throws(CaptureError) {
                if try !box.reader.readFrame() {
                    guard loopAtEnd, box.reader.framesRead > 0 else {
                        events.ended(nil)
                        return .finish
                    }
                    try box.reader.rewind()
                    box.reader.resetCount()
                    guard try box.reader.readFrame() else {
                        events.ended(nil)
                        return .finish
                    }
                }
            } catch {
                events.ended(error)
                return .finish
            }
            guard let buffer = pool.take() else {
                events.dropped(.poolExhausted)
                return .continue
            }
            box.reader.frame.withUnsafeBufferPointer { I420Copy.copy($0, into: buffer) }
            events.frame(buffer, captureTime)
            return .continue
        }
    }

    func stop() async {
        await loop.stop()
        reader.withLock { box in
            box?.reader.close()
            box = nil
        }
    }
}

/// Gives the loop thread the reader.
private final class ReaderBox: @unchecked Sendable {
    // Why @unchecked Sendable is safe: the reader is used by the loop thread only while the loop runs; `stop()`
    // closes it after `PacedFrameLoop.stop()` has seen that thread finish, so no two threads use it at once.
    let reader: Y4MReader
    init(_ reader: Y4MReader) { self.reader = reader }
}

/// Copies a tightly packed I420 frame into an NV12 or I420 frame buffer (pure Swift; the file camera's only
/// conversion).
enum I420Copy {
    static func copy(_ source: UnsafeBufferPointer<UInt8>, into buffer: VideoFrameBuffer) {
        guard let src = source.baseAddress else { return }
        let width = buffer.width
        let height = buffer.height
        let chromaWidth = (width + 1) / 2
        let chromaHeight = (height + 1) / 2
        let y = buffer.mutablePlane(0)
        for row in 0..<height { (y + row * buffer.stride(0)).update(from: src + row * width, count: width) }
        let u = src + width * height
        let v = u + chromaWidth * chromaHeight
        switch buffer.format {
        case .i420:
            let du = buffer.mutablePlane(1)
            let dv = buffer.mutablePlane(2)
            for row in 0..<chromaHeight {
                (du + row * buffer.stride(1)).update(from: u + row * chromaWidth, count: chromaWidth)
                (dv + row * buffer.stride(2)).update(from: v + row * chromaWidth, count: chromaWidth)
            }
        case .nv12:
            let uv = buffer.mutablePlane(1)
            let stride = buffer.stride(1)
            for row in 0..<chromaHeight {
                let line = uv + row * stride
                let su = u + row * chromaWidth
                let sv = v + row * chromaWidth
                for x in 0..<chromaWidth {
                    line[2 * x] = su[x]
                    line[2 * x + 1] = sv[x]
                }
            }
        }
    }
}
