internal import CV4L2
import CaptureCore

/// A single-plane image format as the driver reports it (`struct v4l2_pix_format`, or plane 0 of
/// `struct v4l2_pix_format_mplane`).
struct ImageFormat: Hashable {
    /// The pixel format.
    var pixelFormat: PixelFormat
    /// Width and height in pixels.
    var dimensions: Dimensions
    /// Bytes from one row to the next (0 for compressed formats).
    var bytesPerLine: Int
    /// Bytes a full frame needs (the driver's buffer size).
    var sizeImage: Int
    /// Planes (1 for single-planar buffers; multi-planar formats of more than one plane are not supported).
    var planeCount: Int = 1
}

extension V4L2Handle {
    /// Wraps `VIDIOC_G_FMT`: the current format.
    func format(_ type: BufferType) throws(V4L2Error) -> ImageFormat {
        var format = v4l2_format()
        format.type = type.rawValue
        try ioctl("VIDIOC_G_FMT", CV4L2_VIDIOC_G_FMT, &format)
        return ImageFormat(format, type)
    }

    /// Wraps `VIDIOC_S_FMT`: asks for `pixelFormat` at `dimensions` and returns what the driver set (it may adjust
    /// the size, and fills in bytes per line and image size).
    func setFormat(
        _ type: BufferType, pixelFormat: PixelFormat, dimensions: Dimensions
    ) throws(V4L2Error) -> ImageFormat {
        try negotiate("VIDIOC_S_FMT", CV4L2_VIDIOC_S_FMT, type, pixelFormat, dimensions)
    }

    /// Wraps `VIDIOC_TRY_FMT`: what `VIDIOC_S_FMT` would set, without changing anything.
    func tryFormat(
        _ type: BufferType, pixelFormat: PixelFormat, dimensions: Dimensions
    ) throws(V4L2Error) -> ImageFormat {
        try negotiate("VIDIOC_TRY_FMT", CV4L2_VIDIOC_TRY_FMT, type, pixelFormat, dimensions)
    }

    /// Issues `VIDIOC_S_FMT` or `VIDIOC_TRY_FMT` for `pixelFormat` at `size` and returns the driver's answer.
    private func negotiate(
        _ call: String, _ request: UInt, _ type: BufferType, _ pixelFormat: PixelFormat, _ size: Dimensions
    ) throws(V4L2Error) -> ImageFormat {
        var format = v4l2_format()
        format.type = type.rawValue
        switch type {
        case .videoCapture:
            format.fmt.pix.pixelformat = pixelFormat.rawValue
            format.fmt.pix.width = UInt32(clamping: size.width)
            format.fmt.pix.height = UInt32(clamping: size.height)
            format.fmt.pix.field = V4L2_FIELD_ANY.rawValue
        case .videoCaptureMultiplanar:
            format.fmt.pix_mp.pixelformat = pixelFormat.rawValue
            format.fmt.pix_mp.width = UInt32(clamping: size.width)
            format.fmt.pix_mp.height = UInt32(clamping: size.height)
            format.fmt.pix_mp.field = V4L2_FIELD_ANY.rawValue
            format.fmt.pix_mp.num_planes = 1
        }
        try ioctl(call, request, &format)
        return ImageFormat(format, type)
    }
}

extension ImageFormat {
    init(_ format: v4l2_format, _ type: BufferType) {
        switch type {
        case .videoCapture:
            let pix = format.fmt.pix
            self.init(
                pixelFormat: PixelFormat(rawValue: pix.pixelformat),
                dimensions: Dimensions(width: Int(pix.width), height: Int(pix.height)),
                bytesPerLine: Int(pix.bytesperline), sizeImage: Int(pix.sizeimage))
        case .videoCaptureMultiplanar:
            let pix = format.fmt.pix_mp
            self.init(
                pixelFormat: PixelFormat(rawValue: pix.pixelformat),
                dimensions: Dimensions(width: Int(pix.width), height: Int(pix.height)),
                bytesPerLine: Int(pix.plane_fmt.0.bytesperline), sizeImage: Int(pix.plane_fmt.0.sizeimage),
                planeCount: Int(pix.num_planes))
        }
    }
}
