internal import CV4L2
import SystemPackage

/// Where a driver buffer lives, for `mmap` (`VIDIOC_QUERYBUF`).
struct BufferLocation: Hashable {
    /// The offset to pass to `mmap`.
    var offset: Int
    /// The buffer's length in bytes.
    var length: Int
}

/// A filled buffer taken from the driver (`VIDIOC_DQBUF`).
struct DequeuedBuffer: Hashable {
    /// The buffer's index.
    var index: Int
    /// Bytes of frame data in it.
    var bytesUsed: Int
    /// The driver flagged the data as corrupt (`V4L2_BUF_FLAG_ERROR`).
    var hasError: Bool
    /// The driver's capture time in nanoseconds, when it is on the monotonic clock
    /// (`V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC`); else `nil`.
    var monotonicTimestampNs: UInt64?
    /// The driver's frame counter.
    var sequence: UInt32
}

extension V4L2Handle {
    /// Wraps `VIDIOC_REQBUFS` for memory-mapped buffers: asks for `count` and returns how many the driver allocated.
    /// A count of 0 frees them.
    func requestBuffers(_ type: BufferType, count: Int) throws(V4L2Error) -> Int {
        var request = v4l2_requestbuffers()
        request.type = type.rawValue
        request.memory = V4L2_MEMORY_MMAP.rawValue
        request.count = UInt32(clamping: count)
        try ioctl("VIDIOC_REQBUFS", CV4L2_VIDIOC_REQBUFS, &request)
        return Int(request.count)
    }

    /// Wraps `VIDIOC_QUERYBUF`: where buffer `index` is, for `mmap`.
    func queryBuffer(_ type: BufferType, index: Int) throws(V4L2Error) -> BufferLocation {
        var plane = v4l2_plane()
        var buffer = Self.buffer(type, index: index)
        try bufferIoctl("VIDIOC_QUERYBUF", CV4L2_VIDIOC_QUERYBUF, &buffer, &plane, type)
        switch type {
        case .videoCapture: return BufferLocation(offset: Int(buffer.m.offset), length: Int(buffer.length))
        case .videoCaptureMultiplanar: return BufferLocation(offset: Int(plane.m.mem_offset), length: Int(plane.length))
        }
    }

    /// Wraps `VIDIOC_QBUF`: gives buffer `index` to the driver to fill.
    func queueBuffer(_ type: BufferType, index: Int) throws(V4L2Error) {
        var plane = v4l2_plane()
        var buffer = Self.buffer(type, index: index)
        try bufferIoctl("VIDIOC_QBUF", CV4L2_VIDIOC_QBUF, &buffer, &plane, type)
    }

    /// Wraps `VIDIOC_DQBUF` on a non-blocking descriptor: the next filled buffer, or `nil` when none is ready yet
    /// (`EAGAIN`).
    func dequeueBuffer(_ type: BufferType) throws(V4L2Error) -> DequeuedBuffer? {
        var plane = v4l2_plane()
        var buffer = Self.buffer(type, index: 0)
        do {
            try bufferIoctl("VIDIOC_DQBUF", CV4L2_VIDIOC_DQBUF, &buffer, &plane, type)
        } catch  where error.errno == .resourceTemporarilyUnavailable {
            return nil
        }
        let timestampKind = buffer.flags & UInt32(V4L2_BUF_FLAG_TIMESTAMP_MASK)
        let seconds = UInt64(clamping: buffer.timestamp.tv_sec)
        let microseconds = UInt64(clamping: buffer.timestamp.tv_usec)
        return DequeuedBuffer(
            index: Int(buffer.index),
            bytesUsed: Int(type == .videoCapture ? buffer.bytesused : plane.bytesused),
            hasError: buffer.flags & UInt32(V4L2_BUF_FLAG_ERROR) != 0,
            monotonicTimestampNs: timestampKind == UInt32(V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC)
                ? seconds &* 1_000_000_000 &+ microseconds &* 1_000 : nil,
            sequence: buffer.sequence)
    }

    private static func buffer(_ type: BufferType, index: Int) -> v4l2_buffer {
        var buffer = v4l2_buffer()
        buffer.type = type.rawValue
        buffer.memory = V4L2_MEMORY_MMAP.rawValue
        buffer.index = UInt32(clamping: index)
        return buffer
    }

    /// Issues a buffer ioctl; for multi-planar buffers, `buffer` points at the one `plane` for the call's duration.
    private func bufferIoctl(
        _ call: String, _ request: UInt, _ buffer: inout v4l2_buffer, _ plane: inout v4l2_plane, _ type: BufferType
    ) throws(V4L2Error) {
        guard type == .videoCaptureMultiplanar else { return try ioctl(call, request, &buffer) }
        let result: Result<Void, V4L2Error> = withUnsafeMutablePointer(to: &plane) { planePointer in
            buffer.m.planes = planePointer
            buffer.length = 1
            defer { buffer.m.planes = nil }
            do throws(V4L2Error) {
                try ioctl(call, request, &buffer)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }
}
