internal import CV4L2
import CaptureCore
import Foundation
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// The controls of a V4L2 node through the extended-control ioctls, on a descriptor of its own (V4L2 allows
/// any number of descriptors on a node; controls can be read and written while another one streams).
final class V4L2ControlChannel: ControlChannel {
    let deviceName: String
    private let driver: any V4L2Driver
    /// The descriptor, used by one caller at a time.
    private let handle: Locked<V4L2Handle>

    /// Opens `node` for its controls.
    init(node: String, driver: any V4L2Driver) throws(ControlError) {
        deviceName = node
        self.driver = driver
        do {
            handle = Locked(try V4L2Handle.open(node, driver: driver))
        } catch {
            throw ControlError.device(CaptureError(error, device: node))
        }
    }

    func queryControls() throws(ControlError) -> [ControlDescription] {
        let result = handle.withLock { handle in Result { () throws(V4L2Error) in try handle.extendedControls() } }
        switch result {
        case .success(let controls): return controls
        case .failure(let error): throw Self.controlError(error, control: nil, node: deviceName)
        }
    }

    func read(_ controls: [ControlDescription]) throws(ControlError) -> [ControlValue] {
        for control in controls where !control.isReadable { throw ControlError.writeOnly(control.key) }
        let result = handle.withLock { handle in
            Result { () throws(ExtendedControlsFailure) in try handle.extendedControlValues(controls) }
        }
        switch result {
        case .success(let values): return values
        case .failure(let failure):
            let control = failure.index.map { controls[$0] } ?? (controls.count == 1 ? controls.first : nil)
            if failure.error.errno == .permissionDenied, let control { throw ControlError.writeOnly(control.key) }
            throw Self.controlError(failure.error, control: control, node: deviceName)
        }
    }

    func write(_ assignments: [ControlAssignment]) throws(ControlError) {
        let result = handle.withLock { handle in
            Result { () throws(ExtendedControlsFailure) in try handle.setExtendedControls(assignments) }
        }
        guard case .failure(let failure) = result else { return }
        let assignment =
            failure.index.map { assignments[$0] } ?? (assignments.count == 1 ? assignments.first : nil)
        let control = assignment?.control
        switch failure.error.errno {
        case .resourceBusy:
            throw ControlError.grabbed(control?.key ?? "the controls")
        case .permissionDenied where control != nil:
            // UVC answers EACCES for a control it cannot set now: a manual value under an automatic mode.
            let key = control?.key ?? ""
            throw control?.flags.contains(.readOnly) == true ? ControlError.readOnly(key) : ControlError.inactive(key)
        case .outOfRange where assignment != nil:
            if let assignment, let number = assignment.value.integerValue {
                let range = assignment.control.range
                throw ControlError.outOfRange(
                    control: assignment.control.key, value: number, range: range, nearest: range.nearestValid(number))
            }
            throw Self.controlError(failure.error, control: control, node: deviceName)
        default:
            throw Self.controlError(failure.error, control: control, node: deviceName)
        }
    }

    func events(_ controls: [ControlDescription]) throws(ControlError) -> AsyncStream<ControlEvent> {
        let watcher: ControlEventWatcher
        do {
            watcher = try ControlEventWatcher(node: deviceName, driver: driver, controls: controls)
        } catch {
            throw Self.controlError(error, control: nil, node: deviceName)
        }
        return watcher.start()
    }

    /// The control error a failed call means.
    static func controlError(_ error: V4L2Error, control: ControlDescription?, node: String) -> ControlError {
        switch error.errno {
        case .noDevice, .noSuchAddressOrDevice:
            return ControlError.device(CaptureError(error, device: node))
        case .resourceBusy:
            return ControlError.grabbed(control?.key ?? "the controls")
        default:
            return ControlError.failed(control: control?.key, call: error.call, errno: error.errno)
        }
    }
}

/// Watches a node's control events on a descriptor and thread of its own, yielding them to one stream until the
/// consumer stops or the device goes away.
private final class ControlEventWatcher: Sendable {
    private let transfer: HandleTransfer
    private let controls: [UInt32: ControlDescription]
    private let stopped = Locked(false)

    /// Opens `node` and subscribes to `V4L2_EVENT_CTRL` for each control (read-only and volatile ones included).
    init(node: String, driver: any V4L2Driver, controls: [ControlDescription]) throws(V4L2Error) {
        let handle = try V4L2Handle.open(node, driver: driver)
        for control in controls where control.type != .controlClass {
            try handle.subscribeControlEvents(control.id)
        }
        transfer = HandleTransfer(handle)
        self.controls = Dictionary(controls.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    func start() -> AsyncStream<ControlEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: ControlEvent.self, bufferingPolicy: .bufferingNewest(1024))
        continuation.onTermination = { [stopped] _ in stopped.withLock { $0 = true } }
        let thread = Thread { [self] in
            nameCurrentThread("v4l2-controls")
            run(continuation)
        }
        thread.start()
        return stream
    }

    private func run(_ continuation: AsyncStream<ControlEvent>.Continuation) {
        let handle = transfer.handle
        defer {
            handle.close()
            continuation.finish()
        }
        while !stopped.withLock({ $0 }) {
            let revents: Int16
            do {
                revents = try handle.poll(events: Int16(POLLPRI), timeoutMs: 100)
            } catch {
                return
            }
            if revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 && revents & Int16(POLLPRI) == 0 { return }
            guard revents & Int16(POLLPRI) != 0 else { continue }
            while true {
                let record: ControlEventRecord?
                do {
                    record = try handle.dequeueControlEvent()
                } catch {
                    return
                }
                guard let record else { break }
                continuation.yield(event(record))
            }
        }
    }

    private func event(_ record: ControlEventRecord) -> ControlEvent {
        let control = controls[record.id]
        let type = ControlType(rawValue: record.type)
        let value: ControlValue? =
            type == .integer64
            ? .integer64(record.value64)
            : type == .string || type.isCompound ? nil : ControlValue.number(Int64(record.value), type: type)
        return ControlEvent(
            id: record.id, key: control?.key ?? "0x" + String(record.id, radix: 16),
            changes: ControlEvent.Changes(rawValue: record.changes), value: value,
            flags: ControlFlags(rawValue: record.flags),
            range: ControlRange(
                minimum: Int64(record.minimum), maximum: Int64(record.maximum), step: UInt64(max(0, record.step))),
            defaultValue: Int64(record.defaultValue))
    }
}

/// Hands an opened handle from the thread that subscribed it to the watcher thread.
///
/// `@unchecked Sendable` is sound: the creating thread stores the handle here and never touches it again; only the
/// one watcher thread uses it afterwards (``ControlEventWatcher/run(_:)``), and that thread closes it.
private final class HandleTransfer: @unchecked Sendable {
    let handle: V4L2Handle
    init(_ handle: V4L2Handle) { self.handle = handle }
}

extension V4L2Backend: ControlProvidingBackend {
    /// The controls of a V4L2 device, on a descriptor of their own.
    package func controlChannel(for device: CaptureDevice) throws(ControlError) -> any ControlChannel {
        guard let node = device.node else { throw ControlError.notSupported("\(device.name) has no device node") }
        return try V4L2ControlChannel(node: node, driver: scanner.driver)
    }

    /// The controls of a V4L2 node (for example `/dev/video0`), whether or not it is capturing.
    ///
    /// - Throws: ``ControlError/device(_:)`` when the node cannot be opened (not found, permission denied, not a
    ///   video4linux node).
    public static func controls(node: String) throws(ControlError) -> CameraControls {
        let backend = V4L2Backend()
        return CameraProvider(backends: [backend]).controls(
            forChannel: try V4L2ControlChannel(node: node, driver: backend.scanner.driver))
    }
}
