#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A machine-readable stamp the synthetic camera draws across the bottom of every frame: its frame number and its
/// capture time on the wall clock, so that a viewer at the far end (a page reading the video from a canvas, a test
/// decoding the stream) can tell frames out of order or repeated and measure glass-to-glass latency against one
/// machine's clock.
///
/// Three rows of 32 cells span the width; a cell is white (luma 235) for a 1 bit and black (16) for a 0, most
/// significant bit first. The first row is the frame number, the second the low 32 bits of the capture time in
/// milliseconds since the Unix epoch (a reader takes the high bits from its own clock), the third a check: the
/// complement of the other two XORed, so that a cell misread anywhere (a codec's artefact at a low bit rate) makes the
/// stamp unreadable instead of a wrong frame number. Cells are at least 8 pixels on a side, so the stamp survives VP8
/// at call bit rates.
public struct FrameStamp: Sendable, Hashable, Codable {
    /// The frame number (wrapping at 2^32).
    public var frameNumber: UInt32
    /// The low 32 bits of the capture time in milliseconds since the Unix epoch.
    public var captureTimeMs: UInt32

    /// Creates a stamp.
    public init(frameNumber: UInt32, captureTimeMs: UInt32) {
        self.frameNumber = frameNumber
        self.captureTimeMs = captureTimeMs
    }

    /// Cells per row.
    public static let cellsPerRow = 32

    /// Rows of cells: frame number, capture time, check.
    public static let rows = 3

    /// The third row's value: every bit of the frame number XOR the capture time, inverted.
    var check: UInt32 { ~(frameNumber ^ captureTimeMs) }

    /// The height of one row of cells for a frame `height` pixels high (even, at least 8).
    public static func rowHeight(frameHeight height: Int) -> Int { max(8, height / 40 & ~1) }

    /// The stamp for a frame captured at `captureTimeNs` on the monotonic clock, placed on the wall clock.
    public static func at(frameNumber: UInt64, captureTimeNs: UInt64) -> FrameStamp {
        var realtime = timespec()
        clock_gettime(CLOCK_REALTIME, &realtime)
        let nowMonotonicNs = MonotonicClock.nowNs()
        let realtimeMs = UInt64(realtime.tv_sec) &* 1_000 &+ UInt64(realtime.tv_nsec) / 1_000_000
        let ageMs = MonotonicClock.elapsedNs(from: captureTimeNs, to: nowMonotonicNs) / 1_000_000
        return FrameStamp(
            frameNumber: UInt32(truncatingIfNeeded: frameNumber),
            captureTimeMs: UInt32(truncatingIfNeeded: realtimeMs &- ageMs))
    }

    /// Draws the stamp into a luma plane `width` × `height` with `stride` bytes a row. Frames narrower than 32 pixels
    /// or lower than three rows of cells get no stamp.
    public func draw(luma: UnsafeMutablePointer<UInt8>, stride: Int, width: Int, height: Int) {
        let rowHeight = Self.rowHeight(frameHeight: height)
        let cellWidth = width / Self.cellsPerRow
        guard cellWidth >= 1, height >= Self.rows * rowHeight else { return }
        for row in 0..<Self.rows {
            let value = row == 0 ? frameNumber : row == 1 ? captureTimeMs : check
            let top = height - (Self.rows - row) * rowHeight
            for cell in 0..<Self.cellsPerRow {
                let bit = value >> UInt32(Self.cellsPerRow - 1 - cell) & 1
                let level: UInt8 = bit == 1 ? 235 : 16
                for y in top..<top + rowHeight {
                    (luma + y * stride + cell * cellWidth).update(repeating: level, count: cellWidth)
                }
            }
        }
    }

    /// Reads a stamp back from a luma plane (each cell's centre pixel against mid-grey), or `nil` when the frame is
    /// too small to carry one or its check row disagrees with what was read.
    public static func read(luma: UnsafePointer<UInt8>, stride: Int, width: Int, height: Int) -> FrameStamp? {
        let rowHeight = rowHeight(frameHeight: height)
        let cellWidth = width / cellsPerRow
        guard cellWidth >= 1, height >= rows * rowHeight else { return nil }
        func value(row: Int) -> UInt32 {
            let y = height - (rows - row) * rowHeight + rowHeight / 2
            var value: UInt32 = 0
            for cell in 0..<cellsPerRow {
                value = value << 1 | (luma[y * stride + cell * cellWidth + cellWidth / 2] >= 128 ? 1 : 0)
            }
            return value
        }
        let stamp = FrameStamp(frameNumber: value(row: 0), captureTimeMs: value(row: 1))
        return value(row: 2) == stamp.check ? stamp : nil
    }
}
