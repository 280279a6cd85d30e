/// Why a frame was not delivered.
public enum FrameDropReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// The driver flagged the buffer as corrupt (`V4L2_BUF_FLAG_ERROR`).
    case corruptBuffer
    /// The buffer held fewer bytes than a full frame.
    case shortBuffer
    /// The frame could not be decoded or converted (for example a truncated JPEG).
    case conversionFailed
    /// Every pooled buffer was still held by consumers.
    case poolExhausted
    /// The frame arrived faster than the adapted output rate.
    case rateAdaptation
}

/// What a backend needs to start streaming: the device, the chosen format and size, and the output layout.
package struct CaptureSessionConfiguration: Sendable {
    package var device: CaptureDevice
    package var format: CaptureFormat
    package var dimensions: Dimensions
    package var fps: Double
    package var output: OutputPixelFormat
    /// Driver buffers to queue (V4L2); fewer means less latency.
    package var bufferCount: Int
    /// Whether synthetic and file cameras pace frames at `fps` (false: as fast as the consumer takes them).
    package var paced: Bool

    package init(
        device: CaptureDevice, format: CaptureFormat, dimensions: Dimensions, fps: Double,
        output: OutputPixelFormat, bufferCount: Int = 4, paced: Bool = true
    ) {
        self.device = device
        self.format = format
        self.dimensions = dimensions
        self.fps = fps
        self.output = output
        self.bufferCount = bufferCount
        self.paced = paced
    }
}

/// Callbacks a session makes from its capture thread. After ``CaptureSession/stop()`` returns it makes none.
package struct CaptureSessionEvents: Sendable {
    /// A converted frame, with its capture time on the monotonic clock in nanoseconds.
    package var frame: @Sendable (VideoFrameBuffer, UInt64) -> Void
    /// A frame was dropped before delivery.
    package var dropped: @Sendable (FrameDropReason) -> Void
    /// The stream ended: `nil` at the end of a finite source, else the error that ended it. The thread has stopped.
    package var ended: @Sendable (CaptureError?) -> Void
    /// The device skipped this many frames that never reached the session: a gap in the driver's frame sequence
    /// numbers (V4L2), reported when the frame after the gap is dequeued.
    package var skipped: @Sendable (Int) -> Void

    package init(
        frame: @escaping @Sendable (VideoFrameBuffer, UInt64) -> Void,
        dropped: @escaping @Sendable (FrameDropReason) -> Void,
        ended: @escaping @Sendable (CaptureError?) -> Void,
        skipped: @escaping @Sendable (Int) -> Void = { _ in }
    ) {
        self.frame = frame
        self.dropped = dropped
        self.ended = ended
        self.skipped = skipped
    }
}

/// What a session actually got from the device, which may differ from what was asked.
public struct GrantedFormat: Sendable, Hashable, Codable {
    /// The pixel format the device delivers.
    public var pixelFormat: PixelFormat
    /// The size the device delivers.
    public var dimensions: Dimensions
    /// The frame rate the device granted.
    public var fps: Double
    /// Bytes per line of the device's buffers (0 where not applicable).
    public var bytesPerLine: Int

    /// Creates a granted-format description.
    public init(pixelFormat: PixelFormat, dimensions: Dimensions, fps: Double, bytesPerLine: Int = 0) {
        self.pixelFormat = pixelFormat
        self.dimensions = dimensions
        self.fps = fps
        self.bytesPerLine = bytesPerLine
    }
}

/// A running (or ready) stream from one device. Owned by the capturer.
package protocol CaptureSession: AnyObject, Sendable {
    /// What the device granted; valid after ``start()`` returns.
    var granted: GrantedFormat { get }
    /// Configures the device and starts the capture thread. Throws without leaking anything. Blocking work (opening
    /// and configuring the device) runs on ``BlockingExecutor``, never on the caller's thread.
    func start() async throws(CaptureError)
    /// Stops the thread and releases the device. Idempotent and safe to call concurrently, before, during or after
    /// ``start()`` (a start it overtakes throws `invalidState`); returns once the device is released and no more
    /// events will be made: the capture thread's last act resumes it.
    func stop() async
}

/// A source of cameras: V4L2, the synthetic camera, recorded devices, Y4M files.
package protocol CameraBackend: Sendable {
    /// The kind of device this backend serves.
    var kind: CaptureDevice.Kind { get }
    /// The cameras it offers now.
    func devices() -> [CaptureDevice]
    /// Whether it can deliver frames from a device format in this pixel format.
    func canConvert(_ pixelFormat: PixelFormat) -> Bool
    /// A session for `configuration`; nothing is opened until ``CaptureSession/start()``.
    func makeSession(
        _ configuration: CaptureSessionConfiguration, events: CaptureSessionEvents
    ) throws(CaptureError) -> any CaptureSession
    /// Cameras added, removed and changed from now on, until the consumer stops iterating (cancellation ends the
    /// stream and releases what watches); `nil` when the backend cannot watch (its devices are fixed). The watch is
    /// in place when this returns, so that nothing that happens afterwards is missed.
    func deviceEvents() -> AsyncStream<DeviceEvent>?
}

extension CameraBackend {
    /// `nil`: the backend's devices do not come and go.
    package func deviceEvents() -> AsyncStream<DeviceEvent>? { nil }
}

/// The set of backends a capturer uses, in order: devices are listed backend by backend.
///
/// ``builtIn`` has the synthetic camera only. The V4L2 module adds `CameraProvider.system` (real cameras, with the
/// synthetic camera as a fallback when none exists); CaptureFileCameras adds cameras from files
/// (`CameraProvider.recorded(_:)`, `y4m(_:loop:)`, `replay(_:loop:)`).
public struct CameraProvider: Sendable {
    package var backends: [any CameraBackend]
    /// Whether the synthetic camera is listed only when no other backend offers a device.
    package var syntheticOnlyAsFallback: Bool

    package init(backends: [any CameraBackend], syntheticOnlyAsFallback: Bool = false) {
        self.backends = backends
        self.syntheticOnlyAsFallback = syntheticOnlyAsFallback
    }

    /// The devices of every backend, in order.
    public func devices() -> [CaptureDevice] {
        var real: [CaptureDevice] = []
        var synthetic: [CaptureDevice] = []
        for backend in backends {
            if backend.kind == .synthetic { synthetic += backend.devices() } else { real += backend.devices() }
        }
        return syntheticOnlyAsFallback && !real.isEmpty ? real : real + synthetic
    }

    /// Whether the backend of `device` can deliver `pixelFormat`.
    public func canConvert(_ pixelFormat: PixelFormat, on device: CaptureDevice) -> Bool {
        backend(for: device)?.canConvert(pixelFormat) ?? false
    }

    /// Cameras added, removed and changed, from every backend that can watch its devices (the V4L2 backend watches
    /// `/dev`), merged into one stream, until the consumer stops iterating. Backends whose devices are fixed (the
    /// synthetic, recorded and file cameras) report nothing; with no backend that watches, the stream ends at once.
    public func deviceEvents() -> AsyncStream<DeviceEvent> {
        let sources = backends.compactMap { $0.deviceEvents() }
        let (stream, continuation) = AsyncStream.makeStream(of: DeviceEvent.self)
        guard !sources.isEmpty else {
            continuation.finish()
            return stream
        }
        let forwarding = Task {
            await withTaskGroup(of: Void.self) { group in
                for source in sources {
                    group.addTask {
                        for await event in source { continuation.yield(event) }
                    }
                }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in forwarding.cancel() }
        return stream
    }

    package func backend(for device: CaptureDevice) -> (any CameraBackend)? {
        backends.first { $0.kind == device.kind }
    }

    /// This provider with more backends after its own.
    package func adding(_ more: [any CameraBackend]) -> CameraProvider {
        CameraProvider(backends: backends + more, syntheticOnlyAsFallback: syntheticOnlyAsFallback)
    }
}
