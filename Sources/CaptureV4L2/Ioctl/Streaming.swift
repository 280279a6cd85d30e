internal import CV4L2

extension V4L2Handle {
    /// Wraps `VIDIOC_STREAMON`.
    func streamOn(_ type: BufferType) throws(V4L2Error) {
        var raw = CInt(bitPattern: type.rawValue)
        try ioctl("VIDIOC_STREAMON", CV4L2_VIDIOC_STREAMON, &raw)
    }

    /// Wraps `VIDIOC_STREAMOFF` (which also returns every buffer to the application, dequeued).
    func streamOff(_ type: BufferType) throws(V4L2Error) {
        var raw = CInt(bitPattern: type.rawValue)
        try ioctl("VIDIOC_STREAMOFF", CV4L2_VIDIOC_STREAMOFF, &raw)
    }
}
