public import CaptureCore

/// The time base an ``IVFWriter`` stamps frames with.
///
/// ``frameIndex(fps:)`` is what vpxenc writes and what every tool plays back frame for frame. ``clock90kHz`` keeps the
/// real capture timing; vpxdec ignores it, but ffmpeg's constant-rate outputs (for example `-f rawvideo`) then
/// duplicate or drop frames to follow the timing unless run with `-fps_mode passthrough`.
public enum IVFTimebase: Sendable, Hashable, Codable {
    /// 1/90000 s ticks, pts = capture time since the first frame on the 90 kHz RTP clock (keeps real timing).
    case clock90kHz
    /// 1/fps s ticks, pts = the frame's index (what vpxenc writes; constant rate).
    case frameIndex(fps: Int)

    var rate: UInt32 {
        switch self {
        case .clock90kHz: UInt32(VP8EncoderConfiguration.clockRate)
        case .frameIndex(let fps): UInt32(clamping: max(1, fps))
        }
    }
}

/// Writes VP8 frames to an IVF file that vpxdec and ffmpeg read.
///
/// The header's frame count is patched in when the writer is closed (``close()``, or at deinit as a best effort).
public final class IVFWriter {
    /// The file's path.
    public let path: String
    /// The header as written so far (frame count updated by ``close()``).
    public private(set) var header: IVFFileHeader
    /// The time base of the pts values.
    public let timebase: IVFTimebase
    /// Frames written so far.
    public private(set) var frameCount = 0

    private var file: BinaryFile?
    private var firstCaptureTimeNs: UInt64?
    private var lastPts: UInt64?
    /// The 12-byte frame header, reused for every frame.
    private var frameHeader = [UInt8](repeating: 0, count: IVFFileHeader.frameHeaderSize)

    /// Creates (or truncates) `path` and writes the header for frames of `dimensions`.
    ///
    /// - Throws: `CaptureError` `ioFailure` when the file cannot be created or written, `invalidArgument` for a size
    ///   an IVF header cannot hold (above 65535 a side).
    public init(
        path: String, dimensions: Dimensions, timebase: IVFTimebase = .frameIndex(fps: 30)
    ) throws(CaptureError) {
        guard (1...65535).contains(dimensions.width), (1...65535).contains(dimensions.height) else {
            throw CaptureError(.invalidArgument, "IVF cannot describe \(dimensions) frames", device: path)
        }
        self.path = path
        self.timebase = timebase
        self.header = IVFFileHeader(dimensions: dimensions, timebaseRate: timebase.rate, timebaseScale: 1)
        let file = try BinaryFile(writingTo: path)
        try file.write(header.bytes)
        self.file = file
    }

    deinit {
        try? close()
    }

    /// Appends an encoded frame; its pts follows the writer's ``timebase``.
    ///
    /// - Throws: `CaptureError` `ioFailure` when writing fails, `invalidState` after ``close()``.
    public func write(_ frame: EncodedFrame) throws(CaptureError) {
        let pts: UInt64
        switch timebase {
        case .frameIndex:
            pts = UInt64(frameCount)
        case .clock90kHz:
            let first = firstCaptureTimeNs ?? frame.captureTimeNs
            firstCaptureTimeNs = first
            let elapsed = frame.captureTimeNs >= first ? frame.captureTimeNs - first : 0
            pts = elapsed / 100_000 * 9 + elapsed % 100_000 * 9 / 100_000
        }
        try write(frame.bytes, pts: pts)
    }

    /// Appends one frame with an explicit pts. A pts not above the previous one is raised to keep pts increasing.
    ///
    /// - Throws: `CaptureError` `ioFailure` when writing fails, `invalidArgument` for an empty or over-4-GiB frame,
    ///   `invalidState` after ``close()``.
    public func write(_ bytes: [UInt8], pts: UInt64) throws(CaptureError) {
        guard !bytes.isEmpty, bytes.count <= Int(UInt32.max) else {
            throw CaptureError(.invalidArgument, "IVF frame of \(bytes.count) bytes", device: path)
        }
        guard let file else { throw CaptureError(.invalidState, "IVF writer is closed", device: path) }
        var stamped = pts
        if let lastPts, stamped <= lastPts { stamped = lastPts + 1 }
        lastPts = stamped
        frameHeader.withUnsafeMutableBytes { header in
            header.storeBytes(of: UInt32(bytes.count).littleEndian, toByteOffset: 0, as: UInt32.self)
            header.storeBytes(of: stamped.littleEndian, toByteOffset: 4, as: UInt64.self)
        }
        try file.write(frameHeader)
        try file.write(bytes)
        frameCount += 1
    }

    /// Patches the frame count into the header and closes the file. Idempotent.
    ///
    /// - Throws: `CaptureError` `ioFailure` when the header cannot be rewritten.
    public func close() throws(CaptureError) {
        guard let file else { return }
        self.file = nil
        header.frameCount = UInt32(clamping: frameCount)
        try file.write(header.bytes, at: 0)
    }
}
