internal import CV4L2
import CaptureCore
import SystemPackage

/// How many entries an enumeration reads at most: a guard against a driver that never returns `EINVAL`.
private let enumerationLimit: UInt32 = 4096

extension V4L2Handle {
    /// Wraps `VIDIOC_ENUM_FMT`: every pixel format of `type`, in driver order, with description and flags.
    func enumerateFormats(_ type: BufferType) throws(V4L2Error) -> [PixelFormatDescription] {
        var formats: [PixelFormatDescription] = []
        for index in 0..<enumerationLimit {
            var desc = v4l2_fmtdesc()
            desc.index = index
            desc.type = type.rawValue
            guard try enumerate("VIDIOC_ENUM_FMT", CV4L2_VIDIOC_ENUM_FMT, &desc) else { break }
            formats.append(
                PixelFormatDescription(
                    pixelFormat: PixelFormat(rawValue: desc.pixelformat), description: cString(desc.description),
                    flags: PixelFormatFlags(v4l2: desc.flags)))
        }
        return formats
    }

    /// Wraps `VIDIOC_ENUM_FRAMESIZES`: the sizes of `pixelFormat` — several discrete sizes, or one stepwise or
    /// continuous range. A driver that does not implement the call (`ENOTTY`) reports none.
    func frameSizes(_ pixelFormat: PixelFormat) throws(V4L2Error) -> [FrameSize] {
        var sizes: [FrameSize] = []
        for index in 0..<enumerationLimit {
            var entry = v4l2_frmsizeenum()
            entry.index = index
            entry.pixel_format = pixelFormat.rawValue
            guard try enumerate("VIDIOC_ENUM_FRAMESIZES", CV4L2_VIDIOC_ENUM_FRAMESIZES, &entry) else { break }
            switch entry.type {
            case V4L2_FRMSIZE_TYPE_DISCRETE.rawValue:
                sizes.append(
                    .discrete(Dimensions(width: Int(entry.discrete.width), height: Int(entry.discrete.height))))
            case V4L2_FRMSIZE_TYPE_STEPWISE.rawValue, V4L2_FRMSIZE_TYPE_CONTINUOUS.rawValue:
                let range = entry.stepwise
                let min = Dimensions(width: Int(range.min_width), height: Int(range.min_height))
                let max = Dimensions(width: Int(range.max_width), height: Int(range.max_height))
                if entry.type == V4L2_FRMSIZE_TYPE_CONTINUOUS.rawValue {
                    sizes.append(.continuous(min: min, max: max))
                } else {
                    let step = Dimensions(width: Int(range.step_width), height: Int(range.step_height))
                    sizes.append(.stepwise(min: min, max: max, step: step))
                }
                return sizes  // A range is the only entry (index 0).
            default:
                break  // An unknown type: skip the entry.
            }
        }
        return sizes
    }

    /// Wraps `VIDIOC_ENUM_FRAMEINTERVALS`: the frame intervals of `pixelFormat` at `size` — a discrete list, or one
    /// stepwise or continuous range. A driver that lists none (or does not implement the call) reports
    /// ``FrameRates/none``.
    func frameIntervals(_ pixelFormat: PixelFormat, size: Dimensions) throws(V4L2Error) -> FrameRates {
        var intervals: [FrameInterval] = []
        for index in 0..<enumerationLimit {
            var entry = v4l2_frmivalenum()
            entry.index = index
            entry.pixel_format = pixelFormat.rawValue
            entry.width = UInt32(clamping: size.width)
            entry.height = UInt32(clamping: size.height)
            guard try enumerate("VIDIOC_ENUM_FRAMEINTERVALS", CV4L2_VIDIOC_ENUM_FRAMEINTERVALS, &entry) else { break }
            switch entry.type {
            case V4L2_FRMIVAL_TYPE_DISCRETE.rawValue:
                intervals.append(FrameInterval(entry.discrete))
            case V4L2_FRMIVAL_TYPE_CONTINUOUS.rawValue:
                return .continuous(min: FrameInterval(entry.stepwise.min), max: FrameInterval(entry.stepwise.max))
            case V4L2_FRMIVAL_TYPE_STEPWISE.rawValue:
                return .stepwise(
                    min: FrameInterval(entry.stepwise.min), max: FrameInterval(entry.stepwise.max),
                    step: FrameInterval(entry.stepwise.step))
            default:
                break
            }
        }
        return .discrete(intervals)
    }

    /// Every (pixel format, size) of `pixelFormat` with its frame rates. For a stepwise or continuous size range the
    /// rates are those enumerated at the range's largest size, as GStreamer does.
    func captureFormats(_ pixelFormat: PixelFormat) throws(V4L2Error) -> [CaptureFormat] {
        var formats: [CaptureFormat] = []
        for size in try frameSizes(pixelFormat) {
            let rates = try frameIntervals(pixelFormat, size: size.maximum)
            formats.append(CaptureFormat(pixelFormat: pixelFormat, size: size, frameRates: rates))
        }
        return formats
    }
}

extension PixelFormatFlags {
    /// The flags of a `struct v4l2_fmtdesc`, translated bit by bit from the kernel's `V4L2_FMT_FLAG_*` constants
    /// (so the result is right whatever raw values the model's options use).
    init(v4l2 flags: UInt32) {
        // V4L2_FMT_FLAG_META_LINE_BASED (Linux 6.8) is newer than some systems' videodev2.h.
        let metaLineBased: Int32 = 0x0200
        let table: [(Int32, PixelFormatFlags)] = [
            (V4L2_FMT_FLAG_COMPRESSED, .compressed), (V4L2_FMT_FLAG_EMULATED, .emulated),
            (V4L2_FMT_FLAG_CONTINUOUS_BYTESTREAM, .continuousBytestream),
            (V4L2_FMT_FLAG_DYN_RESOLUTION, .dynamicResolution),
            (V4L2_FMT_FLAG_ENC_CAP_FRAME_INTERVAL, .encoderCapFrameInterval),
            (V4L2_FMT_FLAG_CSC_COLORSPACE, .cscColorspace), (V4L2_FMT_FLAG_CSC_YCBCR_ENC, .cscYCbCr),
            (V4L2_FMT_FLAG_CSC_QUANTIZATION, .cscQuantization), (V4L2_FMT_FLAG_CSC_XFER_FUNC, .cscTransferFunction),
            (metaLineBased, .metaLineBased),
        ]
        self = PixelFormatFlags(table.filter { flags & UInt32($0.0) != 0 }.map(\.1))
    }
}

extension FrameInterval {
    /// The interval of a `struct v4l2_fract`.
    init(_ fraction: v4l2_fract) {
        self.init(numerator: fraction.numerator, denominator: fraction.denominator)
    }

    /// This interval as a `struct v4l2_fract`.
    var fraction: v4l2_fract { v4l2_fract(numerator: numerator, denominator: denominator) }
}
