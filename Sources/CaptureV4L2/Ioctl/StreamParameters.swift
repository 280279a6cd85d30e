internal import CV4L2
import CaptureCore

/// The capture streaming parameters (`struct v4l2_captureparm`).
struct StreamParameters: Hashable {
    /// Whether the driver lets the frame interval be set (`V4L2_CAP_TIMEPERFRAME`).
    var canSetFrameInterval: Bool
    /// The current frame interval; 0/0 when the driver does not report one.
    var frameInterval: FrameInterval
}

extension V4L2Handle {
    /// Wraps `VIDIOC_G_PARM`.
    func streamParameters(_ type: BufferType) throws(V4L2Error) -> StreamParameters {
        var parm = v4l2_streamparm()
        parm.type = type.rawValue
        try ioctl("VIDIOC_G_PARM", CV4L2_VIDIOC_G_PARM, &parm)
        return StreamParameters(parm)
    }

    /// Wraps `VIDIOC_S_PARM`: asks for `interval` and returns what the driver granted.
    func setFrameInterval(_ type: BufferType, _ interval: FrameInterval) throws(V4L2Error) -> StreamParameters {
        var parm = v4l2_streamparm()
        parm.type = type.rawValue
        parm.parm.capture.timeperframe = interval.fraction
        try ioctl("VIDIOC_S_PARM", CV4L2_VIDIOC_S_PARM, &parm)
        return StreamParameters(parm)
    }
}

extension StreamParameters {
    init(_ parm: v4l2_streamparm) {
        self.init(
            canSetFrameInterval: parm.parm.capture.capability & UInt32(V4L2_CAP_TIMEPERFRAME) != 0,
            frameInterval: FrameInterval(parm.parm.capture.timeperframe))
    }
}
