import CaptureCore
import SystemPackage

/// An open, configured, streaming device: the handle, the granted format and rate, and the mapped buffers.
///
/// ``start(node:configuration:driver:)`` either returns a streaming device or throws having released everything it
/// acquired; ``close()`` releases it all (`STREAMOFF`, `munmap`, `REQBUFS 0`, `close`) and is idempotent.
final class V4L2Stream {
    /// One memory-mapped driver buffer.
    struct Mapping {
        var address: UnsafeMutableRawPointer
        var length: Int
    }

    let handle: V4L2Handle
    let type: BufferType
    /// What `VIDIOC_S_FMT` set.
    let format: ImageFormat
    /// The frame rate the driver granted.
    let fps: Double
    private(set) var mappings: [Mapping] = []
    private var buffersRequested = false
    private(set) var streaming = false

    private init(handle: V4L2Handle, type: BufferType, format: ImageFormat, fps: Double) {
        self.handle = handle
        self.type = type
        self.format = format
        self.fps = fps
    }

    deinit { close() }

    var node: String { handle.node }

    /// Opens `node`, sets the format and rate of `configuration`, maps `configuration.bufferCount` buffers, queues
    /// them and starts streaming.
    static func start(
        node: String, configuration: CaptureSessionConfiguration, driver: any V4L2Driver
    ) throws(CaptureError) -> V4L2Stream {
        let handle: V4L2Handle
        do {
            handle = try V4L2Handle.open(node, driver: driver)
        } catch {
            throw CaptureError(error, device: node)
        }
        // From here on every failure closes the handle (explicitly, and V4L2Handle.deinit as a backstop).
        do {
            let capability = try handle.queryCapability()
            guard let type = capability.captureBufferType else {
                handle.close()
                throw CaptureError(
                    .notACaptureDevice, "not a video-capture device with streaming I/O", device: node,
                    call: "VIDIOC_QUERYCAP")
            }
            let requested = configuration.format.pixelFormat
            let format = try handle.setFormat(type, pixelFormat: requested, dimensions: configuration.dimensions)
            let size = format.dimensions
            guard format.pixelFormat == requested, format.planeCount == 1,
                (1...16384).contains(size.width), (1...16384).contains(size.height)
            else {
                handle.close()
                throw CaptureError(
                    .formatNotSupported,
                    "asked for \(requested) \(configuration.dimensions), the driver set \(format.pixelFormat) "
                        + "\(format.dimensions) with \(format.planeCount) plane(s)",
                    device: node, call: "VIDIOC_S_FMT")
            }
            let fps = try negotiateRate(handle, type, configuration)
            let stream = V4L2Stream(handle: handle, type: type, format: format, fps: fps)
            do {
                try stream.mapAndStream(count: configuration.bufferCount)
            } catch {
                stream.close()
                throw error
            }
            return stream
        } catch let error as V4L2Error {
            handle.close()
            throw CaptureError(error, device: node)
        } catch let error as CaptureError {
            handle.close()
            throw error
        } catch {
            handle.close()
            throw CaptureError(.driverError, "\(error)", device: node)
        }
    }

    /// Sets the frame interval nearest `configuration.fps` when the driver allows it and returns the rate the driver
    /// reports back; a driver that reports no rate keeps the requested one.
    private static func negotiateRate(
        _ handle: V4L2Handle, _ type: BufferType, _ configuration: CaptureSessionConfiguration
    ) throws(V4L2Error) -> Double {
        let current: StreamParameters
        do {
            current = try handle.streamParameters(type)
        } catch  where error.errno == .inappropriateIOCTLForDevice || error.errno == .invalidArgument {
            return configuration.fps  // No G_PARM: the driver says nothing about its rate.
        }
        var granted = current
        if current.canSetFrameInterval {
            granted = try handle.setFrameInterval(type, interval(for: configuration))
        }
        return granted.frameInterval.fps > 0 ? granted.frameInterval.fps : configuration.fps
    }

    /// The interval to ask for: the listed interval matching `fps` when the format lists it, else `1000/(fps·1000)`.
    static func interval(for configuration: CaptureSessionConfiguration) -> FrameInterval {
        let fps = configuration.fps
        if case .discrete(let listed) = configuration.format.frameRates,
            let match = listed.first(where: { abs($0.fps - fps) < 0.001 })
        {
            return match
        }
        guard fps > 0, fps.isFinite else { return FrameInterval(numerator: 0, denominator: 0) }
        return FrameInterval(numerator: 1000, denominator: UInt32(clamping: Int((fps * 1000).rounded())))
    }

    private func mapAndStream(count: Int) throws(V4L2Error) {
        buffersRequested = true
        let granted = try handle.requestBuffers(type, count: min(max(count, 1), 32))
        guard granted > 0 else { throw V4L2Error(call: "VIDIOC_REQBUFS", errno: .noMemory) }
        for index in 0..<granted {
            let location = try handle.queryBuffer(type, index: index)
            let address = try handle.map(length: location.length, offset: location.offset)
            mappings.append(Mapping(address: address, length: location.length))
        }
        try queueAll()
        try handle.streamOn(type)
        streaming = true
    }

    /// Queues every buffer (after `REQBUFS`, or after `STREAMOFF` returned them all).
    func queueAll() throws(V4L2Error) {
        for index in mappings.indices { try handle.queueBuffer(type, index: index) }
    }

    /// `STREAMOFF`, requeue every buffer, `STREAMON`: the restart for a stalled stream.
    func restart() throws(V4L2Error) {
        try handle.streamOff(type)
        streaming = false
        try queueAll()
        try handle.streamOn(type)
        streaming = true
    }

    /// Stops streaming and releases every mapping, the buffers and the descriptor. Errors are ignored: the device
    /// may already be gone.
    func close() {
        if streaming {
            streaming = false
            try? handle.streamOff(type)
        }
        for mapping in mappings { handle.driver.munmap(mapping.address, length: mapping.length) }
        mappings = []
        if buffersRequested {
            buffersRequested = false
            _ = try? handle.requestBuffers(type, count: 0)
        }
        handle.close()
    }
}
