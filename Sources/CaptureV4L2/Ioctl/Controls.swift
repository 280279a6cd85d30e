internal import CV4L2
import SystemPackage

/// A control a device offers (`struct v4l2_queryctrl`).
struct ControlInfo: Hashable {
    /// The control id (`V4L2_CID_*`).
    var id: UInt32
    /// The driver's name for it, for example `"Brightness"`.
    var name: String
    /// The control type (`enum v4l2_ctrl_type`).
    var type: UInt32
    var minimum: Int32
    var maximum: Int32
    var step: Int32
    var defaultValue: Int32
    var flags: UInt32

    /// Whether it is a menu control (`V4L2_CTRL_TYPE_MENU`).
    var isMenu: Bool { type == V4L2_CTRL_TYPE_MENU.rawValue }
    /// Whether it is a button (`V4L2_CTRL_TYPE_BUTTON`), set by writing any value.
    var isButton: Bool { type == V4L2_CTRL_TYPE_BUTTON.rawValue }
    /// Whether the driver marks it disabled (`V4L2_CTRL_FLAG_DISABLED`).
    var isDisabled: Bool { flags & UInt32(V4L2_CTRL_FLAG_DISABLED) != 0 }
}

/// Well-known control ids.
enum ControlID {
    /// Where the camera faces. The corresponding V4L2 constant is `V4L2_CID_CAMERA_ORIENTATION`.
    static let cameraOrientation = CV4L2_CID_CAMERA_ORIENTATION
    /// Sensor mounting rotation in degrees. The corresponding V4L2 constant is `V4L2_CID_CAMERA_SENSOR_ROTATION`.
    static let cameraSensorRotation = CV4L2_CID_CAMERA_SENSOR_ROTATION
}

extension V4L2Handle {
    /// Wraps `VIDIOC_QUERYCTRL` for one id; `nil` when the device has no such control (`EINVAL`).
    func queryControl(_ id: UInt32) throws(V4L2Error) -> ControlInfo? {
        var query = v4l2_queryctrl()
        query.id = id
        do {
            try ioctl("VIDIOC_QUERYCTRL", CV4L2_VIDIOC_QUERYCTRL, &query)
        } catch  where error.errno == .invalidArgument {
            return nil
        }
        return ControlInfo(query)
    }

    /// Every control, in the driver's order (`VIDIOC_QUERYCTRL` with `V4L2_CTRL_FLAG_NEXT_CTRL`); class headings
    /// (`V4L2_CTRL_TYPE_CTRL_CLASS`) are left out.
    func controls() throws(V4L2Error) -> [ControlInfo] {
        var controls: [ControlInfo] = []
        var id: UInt32 = 0
        for _ in 0..<4096 {
            var query = v4l2_queryctrl()
            query.id = id | CV4L2_CTRL_FLAG_NEXT_CTRL
            guard try enumerate("VIDIOC_QUERYCTRL", CV4L2_VIDIOC_QUERYCTRL, &query) else { break }
            if query.type != V4L2_CTRL_TYPE_CTRL_CLASS.rawValue { controls.append(ControlInfo(query)) }
            guard query.id > id else { break }  // A driver that does not advance would loop forever.
            id = query.id
        }
        return controls
    }

    /// Wraps `VIDIOC_QUERYMENU`: the names of a menu control's items, by index (items the driver skips are absent).
    func menuItems(_ control: ControlInfo) throws(V4L2Error) -> [Int32: String] {
        guard control.isMenu, control.minimum <= control.maximum else { return [:] }
        var items: [Int32: String] = [:]
        for index in control.minimum...control.maximum {
            var menu = v4l2_querymenu()
            menu.id = control.id
            menu.index = UInt32(bitPattern: index)
            do {
                try ioctl("VIDIOC_QUERYMENU", CV4L2_VIDIOC_QUERYMENU, &menu)
            } catch  where error.errno == .invalidArgument {
                continue
            }
            items[index] = cString(menu.name)
        }
        return items
    }

    /// Wraps `VIDIOC_G_CTRL`.
    func controlValue(_ id: UInt32) throws(V4L2Error) -> Int32 {
        var control = v4l2_control(id: id, value: 0)
        try ioctl("VIDIOC_G_CTRL", CV4L2_VIDIOC_G_CTRL, &control)
        return control.value
    }

    /// The value of control `id`, or `nil` when the device does not have it (`EINVAL`).
    func optionalControlValue(_ id: UInt32) throws(V4L2Error) -> Int32? {
        do {
            return try controlValue(id)
        } catch  where error.errno == .invalidArgument {
            return nil
        }
    }

    /// Wraps `VIDIOC_S_CTRL`.
    func setControl(_ id: UInt32, to value: Int32) throws(V4L2Error) {
        var control = v4l2_control(id: id, value: value)
        try ioctl("VIDIOC_S_CTRL", CV4L2_VIDIOC_S_CTRL, &control)
    }
}

extension ControlInfo {
    init(_ query: v4l2_queryctrl) {
        self.init(
            id: query.id, name: cString(query.name), type: query.type, minimum: query.minimum,
            maximum: query.maximum, step: query.step, defaultValue: query.default_value, flags: query.flags)
    }
}
