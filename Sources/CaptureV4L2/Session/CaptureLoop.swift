import CaptureConversion
import CaptureCore
import Logging
import Synchronization
import SystemPackage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The capture thread's work: wait for a filled buffer, convert it into a pooled frame buffer, give the driver
/// buffer back, deliver the frame; restart a stalled stream once; end on disconnection or a driver error.
///
/// Gaps in the driver's sequence numbers are counted (``driverSkippedFrames``) and reported as skipped frames; `EIO`
/// while streaming is a disconnection only when the device no longer answers `VIDIOC_QUERYCAP`, else a driver error.
final class CaptureLoop: @unchecked Sendable {
    // Why @unchecked Sendable is safe: `stream`, `pool`, `jpegDecoder` and `timestamps` are touched only by the capture
    // thread, which receives the loop before it starts (thread creation orders the handover) and owns it until `run()`
    // returns; the decoder is made in `init` and freed with the loop. The session reads `timestampSummary` only after
    // that thread has finished (its last act finishes the session's `Completion`, whose lock orders it before the
    // resumed `stop()`), and likewise `frameCount` and `driverSkippedFrames`.
    // `stopRequested` is atomic; everything else is immutable and Sendable.

    private let stream: V4L2Stream
    private let events: CaptureSessionEvents
    private let conversion: FrameConversion
    private let pool: FrameBufferPool
    /// The stream's MJPEG decoder, kept from frame to frame (it makes TurboJPEG's decompressor on the first JPEG).
    private let jpegDecoder = JPEGDecoder()
    /// Bytes a complete raw frame of the stream's format needs (1 for compressed formats); fixed for the stream.
    private let minimumFrameBytes: Int
    private let logger: Logger
    /// Set by ``CaptureSession/stop()``; the loop checks it at least every ``pollSliceMs``.
    let stopRequested = Atomic<Bool>(false)
    /// No frame for this long restarts the stream once, then fails it: max(1 s, 5 frame intervals) unless given.
    let stallTimeoutNs: UInt64
    /// The nominal time between frames (0 when the rate is unknown).
    let frameIntervalNs: UInt64
    /// The longest single `poll` wait, so a stop request is noticed promptly.
    static let pollSliceMs: UInt64 = 100

    private var timestamps: FrameTimestamps
    private(set) var frameCount = 0
    /// Frames the driver's sequence numbers show it skipped (it had no free buffer, or fell behind).
    private(set) var driverSkippedFrames = 0

    init(
        stream: V4L2Stream, output: OutputPixelFormat, bufferCount: Int, events: CaptureSessionEvents,
        conversion: FrameConversion, logger: Logger, stallTimeoutNs: UInt64? = nil
    ) {
        self.stream = stream
        self.events = events
        self.conversion = conversion
        self.logger = logger
        self.pool = FrameBufferPool(format: output, dimensions: stream.format.dimensions, capacity: bufferCount + 4)
        let format = stream.format
        self.minimumFrameBytes =
            conversion.minimumFrameBytes(
                format.pixelFormat, format.dimensions.width, format.dimensions.height, format.bytesPerLine) ?? 1
        let intervalNs = stream.fps > 0 ? UInt64(1e9 / stream.fps) : 1_000_000_000
        let frameIntervalNs = stream.fps > 0 ? intervalNs : 0
        self.frameIntervalNs = frameIntervalNs
        self.timestamps = FrameTimestamps(frameIntervalNs: frameIntervalNs)
        self.stallTimeoutNs = stallTimeoutNs ?? max(1_000_000_000, 5 * intervalNs)
    }

    /// Whether frames carried the driver's timestamps, and why not if they did not.
    var timestampSummary: (driver: Bool, reason: String?) {
        (timestamps.usingDriverTimestamps, timestamps.fallbackReason)
    }

    /// Runs until stopped or the stream fails, then releases the device and, unless stopped, reports the end.
    func run() {
        let failure = capture()
        stream.close()
        if let failure, !stopRequested.load(ordering: .acquiring) {
            logger.debug("capture ended", metadata: ["device": "\(stream.node)", "error": "\(failure)"])
            events.ended(failure)
        }
    }

    /// The loop; returns the error that ended it, or `nil` when stopped.
    private func capture() -> CaptureError? {
        var lastProgressNs = MonotonicClock.nowNs()
        var restarted = false
        var lastSequence: UInt32?
        let startedNs = lastProgressNs
        let events = Int16(POLLIN | POLLPRI)
        while !stopRequested.load(ordering: .acquiring) {
            let now = MonotonicClock.nowNs()
            let waited = now &- lastProgressNs
            if waited >= stallTimeoutNs {
                if restarted {
                    return CaptureError(
                        .streamStalled, "no frame for \(waited / 1_000_000) ms, even after restarting the stream",
                        device: stream.node, call: "VIDIOC_DQBUF")
                }
                logger.debug("stream stalled; restarting it", metadata: ["device": "\(stream.node)"])
                do {
                    try stream.restart()
                } catch {
                    return CaptureError(error, device: stream.node)
                }
                restarted = true
                lastSequence = nil  // Sequence numbers restart with the stream.
                lastProgressNs = MonotonicClock.nowNs()
                continue
            }
            let sliceMs = min(Self.pollSliceMs, (stallTimeoutNs - waited) / 1_000_000 + 1)
            let revents: Int16
            do {
                revents = try stream.handle.poll(events: events, timeoutMs: Int32(sliceMs))
            } catch {
                return streamingError(error)
            }
            guard revents != 0 else { continue }
            let buffer: DequeuedBuffer?
            do {
                buffer = try stream.handle.dequeueBuffer(stream.type)
            } catch {
                return streamingError(error)
            }
            guard let buffer else {
                // Readable with an error flag but nothing to dequeue: back off instead of spinning.
                // blocking: the capture thread backs off instead of spinning.
                if revents & Int16(POLLERR | POLLHUP) != 0 { usleep(10_000) }
                continue
            }
            let dequeuedNs = MonotonicClock.nowNs()
            if let lastSequence {
                let gap = Self.skippedFrames(
                    from: lastSequence, to: buffer.sequence, alreadySkipped: driverSkippedFrames,
                    elapsedNs: dequeuedNs &- startedNs, frameIntervalNs: frameIntervalNs)
                if gap > 0 {
                    driverSkippedFrames += gap
                    self.events.skipped(gap)
                }
            }
            lastSequence = buffer.sequence
            let frame = process(buffer, dequeuedNs: dequeuedNs)
            do {
                try stream.handle.queueBuffer(stream.type, index: buffer.index)
            } catch {
                return streamingError(error)
            }
            lastProgressNs = dequeuedNs
            restarted = false
            if let frame {
                frameCount += 1
                self.events.frame(frame.buffer, frame.timestampNs)
            }
        }
        return nil
    }

    /// The frames a driver skipped between sequence numbers `previous` and `current`, given that `alreadySkipped`
    /// were counted in the `elapsedNs` since the stream started.
    ///
    /// The difference is taken modulo 2^32, so a counter that wraps (vivid's `wrap_sequence_number`, or any driver
    /// after 2^32 frames) is no gap. A step backwards, or a jump that would make the stream's skipped frames more than
    /// four times the frame intervals it has lasted (plus a few), is a discontinuity — the driver reset or jumped its
    /// counter — and counts nothing, so one odd sequence number cannot report thousands of lost frames.
    static func skippedFrames(
        from previous: UInt32, to current: UInt32, alreadySkipped: Int, elapsedNs: UInt64, frameIntervalNs: UInt64
    ) -> Int {
        let distance = Int(Int32(bitPattern: current &- previous))
        guard distance > 1 else { return 0 }
        let gap = distance - 1
        if frameIntervalNs > 0 {
            let plausible = 4 * Int(clamping: elapsedNs / frameIntervalNs) + 16
            if alreadySkipped + gap > plausible { return 0 }
        }
        return gap
    }

    /// The capture error for a call that failed while streaming. `EIO` is what a V4L2 queue returns both when its
    /// device is unplugged and when the driver hit an unrecoverable streaming error (`vb2_queue_error`) with the
    /// device still present: `VIDIOC_QUERYCAP` on the same descriptor tells them apart (an unplugged device answers
    /// `ENODEV`), so a device that is still there is reported as a driver error rather than a disconnection.
    private func streamingError(_ failure: V4L2Error) -> CaptureError {
        guard failure.errno == .ioError else { return CaptureError(failure, device: stream.node) }
        // An unplug is seen by the driver a moment before the node is unregistered: give it that moment.
        // blocking: the capture thread gives an unplug the moment the driver needs.
        usleep(20_000)
        let present: Bool
        do {
            _ = try stream.handle.queryCapability()
            present = true
        } catch {
            present = false
        }
        guard present else { return CaptureError(failure, device: stream.node) }
        return CaptureError(
            .driverError, "the driver reported an unrecoverable streaming error; the device is still present",
            device: stream.node, call: failure.call, errno: failure.errno)
    }

    /// Converts a dequeued buffer into a pooled frame buffer, or reports why it is dropped.
    private func process(
        _ buffer: DequeuedBuffer, dequeuedNs: UInt64
    ) -> (buffer: VideoFrameBuffer, timestampNs: UInt64)? {
        let mappings = stream.mappings
        guard mappings.indices.contains(buffer.index) else {
            events.dropped(.corruptBuffer)
            return nil
        }
        if buffer.hasError {
            events.dropped(.corruptBuffer)
            return nil
        }
        let format = stream.format
        let mapping = mappings[buffer.index]
        let used = min(buffer.bytesUsed, mapping.length)
        if used < minimumFrameBytes {
            events.dropped(.shortBuffer)
            return nil
        }
        guard let output = pool.take() else {
            events.dropped(.poolExhausted)
            return nil
        }
        do {
            try conversion.convert(
                UnsafeRawBufferPointer(start: mapping.address, count: used), format.pixelFormat,
                format.dimensions.width, format.dimensions.height, format.bytesPerLine, output, jpegDecoder)
        } catch {
            events.dropped(.conversionFailed)
            return nil
        }
        return (output, timestamps.next(driverNs: buffer.monotonicTimestampNs, nowNs: dequeuedNs))
    }
}
