public import CaptureCore
public import CoreMetrics
import Logging

/// A ready-made capturer delegate that encodes every captured frame to VP8 and hands the result to a closure, to
/// asynchronous streams and/or to an IVF file.
///
/// ```swift
/// let consumer = try VP8EncodingConsumer(
///     configuration: VP8EncoderConfiguration(targetBitrateKbps: 2000), ivfPath: "out.ivf")
/// let capturer = CameraVideoCapturer(delegate: consumer)
/// try await capturer.startCapture(target: Dimensions(width: 640, height: 480))
/// …
/// await capturer.stopCapture()
/// let statistics = try consumer.finish()
/// ```
///
/// Frames are encoded on the thread that delivers them (the capture thread), one at a time under a lock, so all
/// members are thread-safe. A slow encode therefore holds the camera's buffer and delays the next frame: this type
/// suits recording and tests. For real-time use (a call), use CaptureCall's `SendPipeline`, which hands the newest
/// frame to a dedicated encoder thread, adapts resolution to CPU load and takes key-frame and bit-rate requests.
/// The closure and the streams receive frames in capture order, outside the lock. The IVF
/// file is created at the first encoded frame, with that frame's size, and completed by ``finish()``.
public final class VP8EncodingConsumer: CameraVideoCapturerDelegate {
    /// What the consumer has done so far.
    public struct Statistics: Sendable, Hashable, Codable {
        /// Frames handed to the consumer.
        public var framesReceived = 0
        /// Frames libvpx produced output for.
        public var framesEncoded = 0
        /// Frames libvpx's rate control dropped (`rc_dropframe_thresh`).
        public var framesDroppedByRateControl = 0
        /// Encoded frames that are key frames.
        public var keyFrames = 0
        /// Frames that failed to encode or to be written (see ``VP8EncodingConsumer/lastError``).
        public var failures = 0
        /// Bytes of encoded output.
        public var encodedBytes = 0

        /// Creates zeroed statistics.
        public init() {}
    }

    private struct State {
        var encoder: VP8Encoder
        var writer: IVFWriter?
        var statistics = Statistics()
        var lastError: CaptureError?
        var streams: [UInt64: AsyncStream<EncodedFrame>.Continuation] = [:]
        var nextStreamID: UInt64 = 0
        var finished = false
    }

    /// Where the IVF file goes, if anywhere.
    public let ivfPath: String?
    /// The time base of the IVF file.
    public let ivfTimebase: IVFTimebase
    private let handler: (@Sendable (EncodedFrame) -> Void)?
    private let state: Locked<State>
    private let metrics: VP8EncoderMetrics
    private let logger = Logger(label: "CaptureVP8.VP8EncodingConsumer")

    /// Creates a consumer.
    ///
    /// - Parameters:
    ///   - configuration: The encoder settings (WebRTC's real-time configuration by default).
    ///   - ivfPath: An IVF file to write every encoded frame to, or `nil`.
    ///   - ivfTimebase: The IVF file's time base; `nil` (default) numbers frames at the configured frame rate, as
    ///     vpxenc does, so that every player shows each frame once.
    ///   - deviceID: The camera's id, the `device` dimension of the consumer's metrics (`camera_vp8_encoder_*`, see
    ///     ``CaptureMetricsScope``).
    ///   - metricsFactory: Where those metrics are made (`MetricsSystem.factory`, a no-op until the app bootstraps
    ///     a backend, by default).
    ///   - onEncodedFrame: Called with every encoded frame, in order, on the capture thread.
    /// - Throws: `CaptureError` `invalidArgument` for a bad configuration.
    public init(
        configuration: VP8EncoderConfiguration = VP8EncoderConfiguration(), ivfPath: String? = nil,
        ivfTimebase: IVFTimebase? = nil, deviceID: String = "unknown",
        metricsFactory: any MetricsFactory = MetricsSystem.factory,
        onEncodedFrame: (@Sendable (EncodedFrame) -> Void)? = nil
    ) throws(CaptureError) {
        self.metrics = VP8EncoderMetrics(deviceID: deviceID, factory: metricsFactory)
        self.ivfPath = ivfPath
        self.ivfTimebase = ivfTimebase ?? .frameIndex(fps: configuration.roundedFramerate)
        self.handler = onEncodedFrame
        self.state = Locked(State(encoder: try VP8Encoder(configuration: configuration)))
    }

    /// Counters so far.
    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// The most recent encoding or writing error, if any.
    public var lastError: CaptureError? { state.withLock { $0.lastError } }

    /// The encoder's configuration in force.
    public var configuration: VP8EncoderConfiguration { state.withLock { $0.encoder.configuration } }

    /// Encoded frames as an asynchronous sequence that keeps only the newest `bufferingNewest` frames when its reader
    /// is slow, and ends at ``finish()``.
    public func encodedFrames(bufferingNewest: Int = 30) -> AsyncStream<EncodedFrame> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: EncodedFrame.self, bufferingPolicy: .bufferingNewest(max(1, bufferingNewest)))
        let id = state.withLock { state -> UInt64? in
            guard !state.finished else { return nil }
            defer { state.nextStreamID += 1 }
            state.streams[state.nextStreamID] = continuation
            return state.nextStreamID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.streams.removeValue(forKey: id) }
        }
        return stream
    }

    /// Makes the next encoded frame a key frame.
    public func requestKeyFrame() {
        state.withLock { $0.encoder.requestKeyFrame() }
    }

    /// Changes the target bit rate and frame rate (see ``VP8Encoder/setRates(bitrateKbps:fps:)``).
    ///
    /// - Throws: `CaptureError` `invalidArgument` for a frame rate below 1 or a bit rate below 1 kbit/s.
    public func setRates(bitrateKbps: Int, fps: Double) throws(CaptureError) {
        try state.withLock { state throws(CaptureError) in
            try state.encoder.setRates(bitrateKbps: bitrateKbps, fps: fps)
        }
    }

    /// Encodes one frame (ignored after ``finish()``). Errors are counted and kept in ``lastError``; they never stop
    /// the capture.
    public func encode(_ frame: VideoFrame) {
        let output = state.withLock { state -> (EncodedFrame, [AsyncStream<EncodedFrame>.Continuation])? in
            guard !state.finished else { return nil }
            state.statistics.framesReceived += 1
            do throws(CaptureError) {
                let start = MonotonicClock.nowNs()
                let output = try state.encoder.encode(frame)
                metrics.frame(durationNs: MonotonicClock.nowNs() &- start, output: output)
                guard let encoded = output else {
                    state.statistics.framesDroppedByRateControl += 1
                    return nil
                }
                state.statistics.framesEncoded += 1
                state.statistics.encodedBytes += encoded.bytes.count
                if encoded.isKeyFrame { state.statistics.keyFrames += 1 }
                if let ivfPath {
                    if state.writer == nil {
                        state.writer = try IVFWriter(
                            path: ivfPath, dimensions: encoded.dimensions, timebase: ivfTimebase)
                    }
                    try state.writer?.write(encoded)
                }
                return (encoded, Array(state.streams.values))
            } catch {
                state.statistics.failures += 1
                metrics.failed()
                if state.lastError == nil {
                    logger.warning("VP8 encoding failed", metadata: ["error": "\(error)"])
                }
                state.lastError = error
                return nil
            }
        }
        guard let (encoded, streams) = output else { return }
        handler?(encoded)
        for stream in streams { stream.yield(encoded) }
    }

    /// Completes the IVF file (frame count), ends the streams and ignores later frames. Idempotent.
    ///
    /// - Returns: The final statistics.
    /// - Throws: `CaptureError` `ioFailure` when the IVF header cannot be completed.
    @discardableResult
    public func finish() throws(CaptureError) -> Statistics {
        let (writer, streams, statistics) = state.withLock { state in
            state.finished = true
            defer {
                state.writer = nil
                state.streams = [:]
            }
            return (state.writer, Array(state.streams.values), state.statistics)
        }
        for stream in streams { stream.finish() }
        try writer?.close()
        return statistics
    }

    // MARK: CameraVideoCapturerDelegate

    /// Encodes the captured frame.
    public func capturer(_ capturer: CameraVideoCapturer, didCapture frame: VideoFrame) {
        encode(frame)
    }
}
