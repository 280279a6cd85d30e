import CaptureCore

/// The controls of a recorded device, held in memory: they start as the dump shows them, writes change the
/// values (and, as UVC does, the inactive flag of a manual control whose automatic mode is switched), and every
/// write is reported as an event to the device's event streams.
package final class RecordedControlChannel: ControlChannel {
    private struct State {
        var entries: [V4L2ControlList.Entry]
        var subscribers: [Int: AsyncStream<ControlEvent>.Continuation] = [:]
        var nextSubscriber = 0
    }

    package let deviceName: String
    private let layout: V4L2ControlList.Layout
    private let listsMenuItems: Bool
    private let state: Locked<State>

    /// Controls starting as `list` shows them.
    package init(deviceName: String, list: V4L2ControlList) {
        self.deviceName = deviceName
        self.layout = list.layout
        self.listsMenuItems = list.listsMenuItems
        self.state = Locked(State(entries: list.entries))
    }

    package func queryControls() throws(ControlError) -> [ControlDescription] {
        state.withLock { $0.entries.map(\.description) }
    }

    package func read(_ controls: [ControlDescription]) throws(ControlError) -> [ControlValue] {
        let entries = state.withLock { $0.entries }
        var values: [ControlValue] = []
        for control in controls {
            guard
                let entry = entries.first(where: {
                    $0.description.id == control.id && $0.description.type != .controlClass
                })
            else { throw ControlError.noSuchControl(control.key) }
            guard entry.description.isReadable else { throw ControlError.writeOnly(control.key) }
            if let value = entry.value {
                values.append(value)
            } else if control.type.isCompound {
                values.append(
                    .payload([UInt8](repeating: 0, count: Int(control.elementSize) * Int(control.elementCount))))
            } else if let number = ControlValue.number(control.defaultValue, type: control.type) {
                values.append(number)
            } else {
                values.append(.string(""))
            }
        }
        return values
    }

    package func write(_ assignments: [ControlAssignment]) throws(ControlError) {
        let result: Result<[ControlEvent], ControlError> = state.withLock { state in
            var entries = state.entries
            var events: [ControlEvent] = []
            for assignment in assignments {
                guard let index = entries.firstIndex(where: { $0.description.id == assignment.control.id }) else {
                    return .failure(.noSuchControl(assignment.control.key))
                }
                let control = entries[index].description
                guard control.isWritable else { return .failure(.readOnly(control.key)) }
                if control.type != .button {
                    if entries[index].value != assignment.value { entries[index].valueLabel = nil }
                    entries[index].value = assignment.value
                }
                events.append(Self.event(entries[index], changes: .value))
                if let rule = V4L2ControlID.automaticModes.first(where: { $0.automatic == control.id }),
                    let manual = entries.firstIndex(where: { $0.description.id == rule.manual }),
                    let mode = assignment.value.integerValue
                {
                    let inactive = !rule.activeWhen.contains(mode)
                    if entries[manual].description.flags.contains(.inactive) != inactive {
                        if inactive {
                            entries[manual].description.flags.insert(.inactive)
                        } else {
                            entries[manual].description.flags.remove(.inactive)
                        }
                        events.append(Self.event(entries[manual], changes: .flags))
                    }
                }
            }
            state.entries = entries
            for continuation in state.subscribers.values {
                for event in events { continuation.yield(event) }
            }
            return .success(events)
        }
        if case .failure(let error) = result { throw error }
    }

    package func events(_ controls: [ControlDescription]) throws(ControlError) -> AsyncStream<ControlEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: ControlEvent.self, bufferingPolicy: .bufferingNewest(256))
        let ids = Set(controls.map(\.id))
        let (filtered, filteredContinuation) = AsyncStream.makeStream(
            of: ControlEvent.self, bufferingPolicy: .bufferingNewest(256))
        let key = state.withLock { state in
            let key = state.nextSubscriber
            state.nextSubscriber += 1
            state.subscribers[key] = continuation
            return key
        }
        // Forward only the requested controls; unsubscribe when the consumer goes away.
        let forward = Task {
            for await event in stream where ids.contains(event.id) { filteredContinuation.yield(event) }
            filteredContinuation.finish()
        }
        filteredContinuation.onTermination = { [state] _ in
            forward.cancel()
            let removed = state.withLock { $0.subscribers.removeValue(forKey: key) }
            removed?.finish()
        }
        return filtered
    }

    /// The listing as it stands, in the dump's layout, with what only the dump says (such as the menu-item names a
    /// `--list-ctrls` dump gives for the selected items).
    package var listing: V4L2ControlList {
        V4L2ControlList(entries: state.withLock { $0.entries }, layout: layout, listsMenuItems: listsMenuItems)
    }

    private static func event(_ entry: V4L2ControlList.Entry, changes: ControlEvent.Changes) -> ControlEvent {
        let control = entry.description
        return ControlEvent(
            id: control.id, key: control.key, changes: changes, value: entry.value, flags: control.flags,
            range: control.range, defaultValue: control.defaultValue)
    }
}
