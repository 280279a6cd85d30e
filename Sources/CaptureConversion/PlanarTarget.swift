internal import CaptureCore
internal import CYUV

/// Three-plane (I420) destination pointers into a ``VideoFrameBuffer`` of either layout.
///
/// For an I420 buffer they are its planes. For an NV12 buffer, Y is its Y plane and U and V are the left and right
/// halves of each row of its UV plane (the UV stride is at least twice the chroma width); after the libyuv call
/// ``finish()`` interleaves every row in place through a one-row stack buffer. Any libyuv function that writes I420
/// can so write NV12 with no second frame-sized buffer and no allocation.
struct PlanarTarget {
    /// The destination buffer.
    let buffer: VideoFrameBuffer
    /// Y plane and stride.
    let y: UnsafeMutablePointer<UInt8>
    let yStride: Int32
    /// U plane and stride.
    let u: UnsafeMutablePointer<UInt8>
    let uStride: Int32
    /// V plane and stride.
    let v: UnsafeMutablePointer<UInt8>
    let vStride: Int32

    /// Width and height as libyuv's `int`.
    var width: Int32 { Int32(truncatingIfNeeded: buffer.width) }
    var height: Int32 { Int32(truncatingIfNeeded: buffer.height) }

    /// Destination planes for `buffer`.
    init(_ buffer: VideoFrameBuffer) {
        self.buffer = buffer
        y = buffer.mutablePlane(0)
        yStride = Int32(truncatingIfNeeded: buffer.stride(0))
        switch buffer.format {
        case .i420:
            u = buffer.mutablePlane(1)
            uStride = Int32(truncatingIfNeeded: buffer.stride(1))
            v = buffer.mutablePlane(2)
            vStride = Int32(truncatingIfNeeded: buffer.stride(2))
        case .nv12:
            let chromaWidth = (buffer.width + 1) / 2
            u = buffer.mutablePlane(1)
            v = buffer.mutablePlane(1) + chromaWidth
            uStride = Int32(truncatingIfNeeded: buffer.stride(1))
            vStride = uStride
        }
    }

    /// For NV12, interleaves the U and V halves of every UV row; for I420 nothing is left to do.
    func finish() {
        guard buffer.format == .nv12 else { return }
        let chromaWidth = (buffer.width + 1) / 2
        let rows = (buffer.height + 1) / 2
        let stride = buffer.stride(1)
        let plane = buffer.mutablePlane(1)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 2 * chromaWidth) { row in
            guard let temp = row.baseAddress else { return }
            for index in 0..<rows {
                let line = plane + index * stride
                temp.update(from: line, count: 2 * chromaWidth)
                MergeUVPlane(
                    temp, Int32(chromaWidth), temp + chromaWidth, Int32(chromaWidth),
                    line, Int32(2 * chromaWidth), Int32(chromaWidth), 1)
            }
        }
    }

    /// Runs a libyuv call that writes I420 into these planes, then ``finish()``; returns the call's result.
    static func write(into buffer: VideoFrameBuffer, _ call: (PlanarTarget) -> Int32) -> Int32 {
        let target = PlanarTarget(buffer)
        let result = call(target)
        if result == 0 { target.finish() }
        return result
    }
}
