/// Draws the synthetic camera's picture: scrolling colour bars, a bouncing box, the frame number, and a
/// machine-readable ``FrameStamp`` (frame number and capture time) across the bottom.
///
/// Rendering reuses one row buffer per plane, so a frame costs no allocation.
struct TestPattern {
    /// BT.601 limited-range colour bars: white, yellow, cyan, green, magenta, red, blue, black.
    private static let bars: [(y: UInt8, u: UInt8, v: UInt8)] = [
        (235, 128, 128), (210, 16, 146), (170, 166, 16), (145, 54, 34),
        (106, 202, 222), (81, 90, 240), (41, 240, 110), (16, 128, 128),
    ]
    /// 3x5 digits, one bit a pixel, rows top to bottom.
    private static let digits: [[UInt8]] = [
        [7, 5, 5, 5, 7], [2, 6, 2, 2, 7], [7, 1, 7, 4, 7], [7, 1, 7, 1, 7], [5, 5, 7, 1, 1],
        [7, 4, 7, 1, 7], [7, 4, 7, 5, 7], [7, 1, 1, 1, 1], [7, 5, 7, 5, 7], [7, 5, 7, 1, 7],
    ]

    let width: Int
    let height: Int
    private var lumaRow: [UInt8]
    private var chromaRowU: [UInt8]
    private var chromaRowV: [UInt8]

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        lumaRow = [UInt8](repeating: 0, count: width)
        chromaRowU = [UInt8](repeating: 0, count: (width + 1) / 2)
        chromaRowV = [UInt8](repeating: 0, count: (width + 1) / 2)
    }

    /// Draws frame number `frame`, captured at `captureTimeNs` (monotonic), into `buffer` (NV12 or I420,
    /// `width` × `height`).
    mutating func draw(frame: UInt64, captureTimeNs: UInt64, into buffer: VideoFrameBuffer) {
        let shift = Int(frame % UInt64(max(width, 1))) * 4 % max(width, 1)
        let chromaWidth = (width + 1) / 2
        let chromaHeight = (height + 1) / 2
        for x in 0..<width {
            lumaRow[x] = Self.bars[((x + shift) % width) * 8 / width].y
        }
        for cx in 0..<chromaWidth {
            let bar = Self.bars[((min(cx * 2, width - 1) + shift) % width) * 8 / width]
            chromaRowU[cx] = bar.u
            chromaRowV[cx] = bar.v
        }
        let y = buffer.mutablePlane(0)
        let yStride = buffer.stride(0)
        lumaRow.withUnsafeBufferPointer { row in
            for r in 0..<height { (y + r * yStride).update(from: row.baseAddress!, count: width) }
        }
        switch buffer.format {
        case .nv12:
            let uv = buffer.mutablePlane(1)
            let uvStride = buffer.stride(1)
            for cx in 0..<chromaWidth {
                uv[2 * cx] = chromaRowU[cx]
                uv[2 * cx + 1] = chromaRowV[cx]
            }
            for r in 1..<max(chromaHeight, 1) { (uv + r * uvStride).update(from: uv, count: chromaWidth * 2) }
        case .i420:
            func fill(plane: Int, from row: [UInt8]) {
                let p = buffer.mutablePlane(plane)
                let stride = buffer.stride(plane)
                row.withUnsafeBufferPointer { src in
                    for r in 0..<chromaHeight { (p + r * stride).update(from: src.baseAddress!, count: chromaWidth) }
                }
            }
            fill(plane: 1, from: chromaRowU)
            fill(plane: 2, from: chromaRowV)
        }
        drawBox(frame: frame, luma: y, stride: yStride)
        drawCounter(frame, luma: y, stride: yStride)
        FrameStamp.at(frameNumber: frame, captureTimeNs: captureTimeNs)
            .draw(luma: y, stride: yStride, width: width, height: height)
    }

    /// A grey box bouncing vertically, so motion shows on every frame.
    private func drawBox(frame: UInt64, luma: UnsafeMutablePointer<UInt8>, stride: Int) {
        let side = max(2, min(width, height) / 8)
        let travel = max(1, height - side)
        let phase = Int(frame * 3 % UInt64(2 * travel))
        let top = phase < travel ? phase : 2 * travel - phase
        let left = max(0, (width - side) / 2)
        for r in top..<min(height, top + side) {
            (luma + r * stride + left).update(repeating: 128, count: min(side, width - left))
        }
    }

    /// The frame number in black-on-white digits at the top left.
    private func drawCounter(_ frame: UInt64, luma: UnsafeMutablePointer<UInt8>, stride: Int) {
        let scale = max(1, height / 120)
        var digitCount = 1
        var divisor: UInt64 = 1
        while frame / divisor >= 10 {
            divisor *= 10
            digitCount += 1
        }
        let margin = scale * 2
        let cellWidth = 4 * scale
        let boxWidth = min(width, margin * 2 + digitCount * cellWidth)
        let boxHeight = min(height, margin * 2 + 5 * scale)
        for r in 0..<boxHeight { (luma + r * stride).update(repeating: 235, count: boxWidth) }
        for position in 0..<digitCount {
            let digit = Int(frame / divisor % 10)
            divisor = max(1, divisor / 10)
            for (row, bits) in Self.digits[digit].enumerated() {
                for column in 0..<3 where bits & (4 >> UInt8(column)) != 0 {
                    let x0 = margin + position * cellWidth + column * scale
                    let y0 = margin + row * scale
                    guard x0 + scale <= width, y0 + scale <= height else { continue }
                    for dy in 0..<scale { (luma + (y0 + dy) * stride + x0).update(repeating: 16, count: scale) }
                }
            }
        }
    }
}
