internal import CV4L2
import CaptureCore
import SystemPackage

/// How many controls and menu items an enumeration reads at most: a guard against a driver that never ends it.
private let controlEnumerationLimit = 4096

/// A failed `VIDIOC_G/S/TRY_EXT_CTRLS`: the call's error and the index of the control the driver blames
/// (`error_idx`), when it names one (an index equal to the count means the request as a whole).
struct ExtendedControlsFailure: Error, Hashable {
    var error: V4L2Error
    var index: Int?
}

extension V4L2Handle {
    /// Wraps `VIDIOC_QUERY_EXT_CTRL` with `V4L2_CTRL_FLAG_NEXT_CTRL | V4L2_CTRL_FLAG_NEXT_COMPOUND`: every control
    /// and class heading, of every type, in the driver's order (disabled ones too, flagged), with menu and
    /// integer-menu items (`VIDIOC_QUERYMENU`). A driver without the ioctl (`ENOTTY`) lists none.
    func extendedControls() throws(V4L2Error) -> [ControlDescription] {
        var controls: [ControlDescription] = []
        var id: UInt32 = 0
        for _ in 0..<controlEnumerationLimit {
            var query = v4l2_query_ext_ctrl()
            query.id = id | CV4L2_CTRL_FLAG_NEXT_CTRL | CV4L2_CTRL_FLAG_NEXT_COMPOUND
            guard try enumerate("VIDIOC_QUERY_EXT_CTRL", CV4L2_VIDIOC_QUERY_EXT_CTRL, &query) else { break }
            var control = ControlDescription(query)
            if control.type.isMenu { control.menuItems = try menuItems(control) }
            controls.append(control)
            guard query.id > id else { break }  // A driver that does not advance would loop forever.
            id = query.id
        }
        return controls
    }

    /// Wraps `VIDIOC_QUERYMENU` for a menu or integer-menu control: its items by index (items the driver skips
    /// are absent).
    func menuItems(_ control: ControlDescription) throws(V4L2Error) -> [ControlMenuItem] {
        guard control.type.isMenu, control.minimum <= control.maximum, control.minimum >= 0 else { return [] }
        var items: [ControlMenuItem] = []
        var index = control.minimum
        while index <= control.maximum && items.count < controlEnumerationLimit {
            var menu = v4l2_querymenu()
            menu.id = control.id
            menu.index = UInt32(truncatingIfNeeded: index)
            if try enumerate("VIDIOC_QUERYMENU", CV4L2_VIDIOC_QUERYMENU, &menu) {
                items.append(
                    control.type == .menu
                        ? ControlMenuItem(index: index, name: cString(menu.name))
                        : ControlMenuItem(index: index, value: menu.value))
            }
            index += 1
        }
        return items
    }

    /// Wraps `VIDIOC_G_EXT_CTRLS` (`V4L2_CTRL_WHICH_CUR_VAL`): the current values of `controls`, read in one call.
    func extendedControlValues(_ controls: [ControlDescription]) throws(ExtendedControlsFailure) -> [ControlValue] {
        guard !controls.isEmpty else { return [] }
        let buffer = ExtendedControlBuffer(controls.map { ($0, nil) })
        defer { buffer.release() }
        try buffer.run(self, "VIDIOC_G_EXT_CTRLS", CV4L2_VIDIOC_G_EXT_CTRLS)
        return controls.indices.map { buffer.value(at: $0) }
    }

    /// Wraps `VIDIOC_S_EXT_CTRLS` (`V4L2_CTRL_WHICH_CUR_VAL`): writes every assignment in one call. When the driver
    /// refuses the request as a whole (`error_idx == count`: nothing was written), `VIDIOC_TRY_EXT_CTRLS` is asked
    /// which control it refuses, so the failure still names it.
    func setExtendedControls(_ assignments: [ControlAssignment]) throws(ExtendedControlsFailure) {
        guard !assignments.isEmpty else { return }
        let buffer = ExtendedControlBuffer(assignments.map { ($0.control, $0.value) })
        defer { buffer.release() }
        do {
            try buffer.run(self, "VIDIOC_S_EXT_CTRLS", CV4L2_VIDIOC_S_EXT_CTRLS)
        } catch {
            guard error.index == nil, assignments.count > 1 else { throw error }
            let probe = ExtendedControlBuffer(assignments.map { ($0.control, $0.value) })
            defer { probe.release() }
            do {
                try probe.run(self, "VIDIOC_TRY_EXT_CTRLS", CV4L2_VIDIOC_TRY_EXT_CTRLS)
            } catch let tried {
                if let index = tried.index { throw ExtendedControlsFailure(error: error.error, index: index) }
            }
            throw error
        }
    }

    /// Wraps `VIDIOC_SUBSCRIBE_EVENT` for `V4L2_EVENT_CTRL` on control `id`.
    func subscribeControlEvents(_ id: UInt32) throws(V4L2Error) {
        var subscription = v4l2_event_subscription()
        subscription.type = CV4L2_EVENT_CTRL
        subscription.id = id
        try ioctl("VIDIOC_SUBSCRIBE_EVENT", CV4L2_VIDIOC_SUBSCRIBE_EVENT, &subscription)
    }

    /// Wraps `VIDIOC_DQEVENT`: the next pending control event as (id, changes, type, 32- and 64-bit value, flags,
    /// minimum, maximum, step, default); `nil` when none is pending (`ENOENT`) or the event is of another type.
    func dequeueControlEvent() throws(V4L2Error) -> ControlEventRecord? {
        var event = v4l2_event()
        do {
            try ioctl("VIDIOC_DQEVENT", CV4L2_VIDIOC_DQEVENT, &event)
        } catch  where error.errno == .noSuchFileOrDirectory {
            return nil
        }
        guard event.type == CV4L2_EVENT_CTRL else { return nil }
        let ctrl = event.u.ctrl
        return ControlEventRecord(
            id: event.id, changes: ctrl.changes, type: ctrl.type, value: ctrl.value, value64: ctrl.value64,
            flags: ctrl.flags, minimum: ctrl.minimum, maximum: ctrl.maximum, step: ctrl.step,
            defaultValue: ctrl.default_value)
    }
}

/// The fields of a `struct v4l2_event_ctrl` and its control id.
struct ControlEventRecord: Hashable {
    var id: UInt32
    var changes: UInt32
    var type: UInt32
    var value: Int32
    var value64: Int64
    var flags: UInt32
    var minimum: Int32
    var maximum: Int32
    var step: Int32
    var defaultValue: Int32
}

/// An array of `struct v4l2_ext_control` built as bytes (the struct is packed; see CV4L2.h), with the payload
/// buffers of string and compound controls. Owned by one call; ``release()`` frees everything.
private final class ExtendedControlBuffer {
    private let controls: [ControlDescription]
    private let bytes: UnsafeMutableRawPointer
    private var payloads: [UnsafeMutableRawPointer?]
    private let stride = Int(CV4L2_EXT_CONTROL_SIZE)

    init(_ items: [(ControlDescription, ControlValue?)]) {
        controls = items.map(\.0)
        bytes = UnsafeMutableRawPointer.allocate(byteCount: max(1, items.count * stride), alignment: 8)
        bytes.initializeMemory(as: UInt8.self, repeating: 0, count: max(1, items.count * stride))
        payloads = []
        for (index, (control, value)) in items.enumerated() {
            let base = index * stride
            bytes.storeBytes(of: control.id, toByteOffset: base + Int(CV4L2_EXT_CONTROL_ID_OFFSET), as: UInt32.self)
            let valueOffset = base + Int(CV4L2_EXT_CONTROL_VALUE_OFFSET)
            if let size = Self.payloadSize(control) {
                let payload = UnsafeMutableRawPointer.allocate(byteCount: max(1, size), alignment: 8)
                payload.initializeMemory(as: UInt8.self, repeating: 0, count: max(1, size))
                switch value {
                case .string(let text)?:
                    let utf8 = Array(text.utf8.prefix(max(0, size - 1)))
                    payload.copyMemory(from: utf8, byteCount: utf8.count)
                case .payload(let data)?:
                    payload.copyMemory(from: data, byteCount: min(size, data.count))
                default: break
                }
                payloads.append(payload)
                bytes.storeBytes(
                    of: UInt32(size), toByteOffset: base + Int(CV4L2_EXT_CONTROL_SIZE_OFFSET), as: UInt32.self)
                bytes.storeBytes(of: UInt(bitPattern: payload), toByteOffset: valueOffset, as: UInt.self)
            } else {
                payloads.append(nil)
                let number = value?.integerValue ?? 0
                if control.type == .integer64 {
                    bytes.storeBytes(of: number, toByteOffset: valueOffset, as: Int64.self)
                } else {
                    bytes.storeBytes(
                        of: Int32(truncatingIfNeeded: number), toByteOffset: valueOffset, as: Int32.self)
                }
            }
        }
    }

    /// The payload size of a string or compound control, `nil` for a value held in the struct.
    private static func payloadSize(_ control: ControlDescription) -> Int? {
        guard control.type == .string || control.type.isCompound || control.flags.contains(.hasPayload) else {
            return nil
        }
        return Int(control.elementSize) * Int(max(1, control.elementCount))
    }

    /// Issues `request` on the array.
    func run(_ handle: V4L2Handle, _ call: String, _ request: UInt) throws(ExtendedControlsFailure) {
        var header = v4l2_ext_controls()
        header.which = CV4L2_CTRL_WHICH_CUR_VAL
        header.count = UInt32(controls.count)
        header.controls = bytes.bindMemory(to: v4l2_ext_control.self, capacity: controls.count)
        do {
            try handle.ioctl(call, request, &header)
        } catch {
            let index = Int(header.error_idx)
            throw ExtendedControlsFailure(error: error, index: index < controls.count ? index : nil)
        }
    }

    /// The value of control `index` after a successful get.
    func value(at index: Int) -> ControlValue {
        let control = controls[index]
        let valueOffset = index * stride + Int(CV4L2_EXT_CONTROL_VALUE_OFFSET)
        if let payload = payloads[index], let size = Self.payloadSize(control) {
            let data = Array(UnsafeRawBufferPointer(start: payload, count: size))
            if control.type == .string {
                return .string(String(decoding: data.prefix { $0 != 0 }, as: UTF8.self))
            }
            return .payload(data)
        }
        if control.type == .integer64 {
            return .integer64(bytes.loadUnaligned(fromByteOffset: valueOffset, as: Int64.self))
        }
        let number = bytes.loadUnaligned(fromByteOffset: valueOffset, as: Int32.self)
        return ControlValue.number(Int64(number), type: control.type) ?? .integer(number)
    }

    func release() {
        for payload in payloads { payload?.deallocate() }
        bytes.deallocate()
    }
}

extension ControlDescription {
    /// The description in a `struct v4l2_query_ext_ctrl` (menu items are added by the caller).
    init(_ query: v4l2_query_ext_ctrl) {
        let count = Int(min(query.nr_of_dims, 4))
        let dims = withUnsafeBytes(of: query.dims) { Array($0.bindMemory(to: UInt32.self).prefix(count)) }
        self.init(
            id: query.id, name: cString(query.name), type: ControlType(rawValue: query.type),
            minimum: query.minimum, maximum: query.maximum, step: query.step, defaultValue: query.default_value,
            flags: ControlFlags(rawValue: query.flags), elementSize: query.elem_size, elementCount: query.elems,
            dimensions: dims)
    }
}
