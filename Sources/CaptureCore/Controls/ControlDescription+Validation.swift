extension ControlDescription {
    /// Checks that `value` may be written to this control now.
    ///
    /// The rule, the same everywhere (facade, profiles, CLI): refuse, never clamp. A read-only control gives
    /// ``ControlError/readOnly(_:)``, an inactive one ``ControlError/inactive(_:)``, a grabbed one
    /// ``ControlError/grabbed(_:)``; a number outside `minimum...maximum` gives
    /// ``ControlError/outOfRange(control:value:range:nearest:)`` and one off the step
    /// ``ControlError/offStep(control:value:range:nearest:)``, both with the nearest valid value; a value of the
    /// wrong kind, a menu index the driver does not list, bits outside a bitmask or a string of the wrong length
    /// give ``ControlError/invalidValue(control:value:reason:)``.
    public func validate(_ value: ControlValue) throws(ControlError) {
        guard type != .controlClass else { throw ControlError.noSuchControl(key) }
        if flags.contains(.readOnly) || flags.contains(.disabled) { throw ControlError.readOnly(key) }
        if flags.contains(.grabbed) { throw ControlError.grabbed(key) }
        if flags.contains(.inactive) { throw ControlError.inactive(key) }
        switch (type, value) {
        case (.button, _):
            return
        case (.integer64, .integer64(let number)):
            try checkRange(number)
        case (.integer, .integer(let number)), (.integer64, .integer(let number)):
            try checkRange(Int64(number))
        case (.boolean, .boolean):
            return
        case (.boolean, .integer(let number)):
            guard number == 0 || number == 1 else {
                throw ControlError.invalidValue(control: key, value: String(number), reason: "a boolean is 0 or 1")
            }
        case (.menu, .menu(let index)), (.integerMenu, .menu(let index)), (.menu, .integer(let index)),
            (.integerMenu, .integer(let index)):
            try checkRange(Int64(index))
            if !menuItems.isEmpty && menuItem(Int64(index)) == nil {
                let listed = menuItems.map { "\($0.index) (\($0.label))" }.joined(separator: ", ")
                throw ControlError.invalidValue(
                    control: key, value: String(index), reason: "not a menu item; the items are \(listed)")
            }
        case (.bitmask, .bitmask(let bits)):
            let valid = UInt32(truncatingIfNeeded: maximum)
            guard bits & ~valid == 0 else {
                throw ControlError.invalidValue(
                    control: key, value: hex8(UInt64(bits)), reason: "bits outside the mask \(hex8(UInt64(valid)))")
            }
        case (.string, .string(let text)):
            let length = Int64(text.utf8.count)
            guard length >= minimum, length <= maximum else {
                throw ControlError.invalidValue(
                    control: key, value: text, reason: "the length must be \(minimum)...\(maximum) bytes")
            }
            guard step <= 1 || UInt64(bitPattern: length &- minimum) % step == 0 else {
                throw ControlError.invalidValue(
                    control: key, value: text, reason: "the length must be \(minimum) plus a multiple of \(step)")
            }
        case (_, .payload(let bytes)) where type.isCompound:
            let size = Int(elementSize) * Int(elementCount)
            guard bytes.count == size else {
                throw ControlError.invalidValue(
                    control: key, value: "\(bytes.count) bytes", reason: "the payload is \(size) bytes")
            }
        default:
            throw ControlError.invalidValue(
                control: key, value: value.description, reason: "a \(type) control does not take this kind of value")
        }
    }

    private func checkRange(_ number: Int64) throws(ControlError) {
        let range = self.range
        guard range.contains(number) else {
            throw ControlError.outOfRange(
                control: key, value: number, range: range, nearest: range.nearestValid(number))
        }
        guard range.isOnStep(number) else {
            throw ControlError.offStep(control: key, value: number, range: range, nearest: range.nearestValid(number))
        }
    }

    /// The value `text` denotes for this control, as `v4l2-ctl --set-ctrl` reads it, plus names: integers in
    /// decimal or `0x` hex; booleans `0`/`1`/`true`/`false`; a menu item by index or by name (case-insensitive),
    /// an integer-menu item by index or by its number; strings as given; bitmasks in decimal or hex.
    ///
    /// - Throws: ``ControlError/invalidValue(control:value:reason:)`` when the text does not denote a value of this
    ///   type (range and step are checked by ``validate(_:)``).
    public func value(parsing text: String) throws(ControlError) -> ControlValue {
        func number() -> Int64? {
            if text.hasPrefix("0x") || text.hasPrefix("0X") {
                return UInt64(text.dropFirst(2), radix: 16).map { Int64(bitPattern: $0) }
            }
            return Int64(text)
        }
        let invalid = { (reason: String) in ControlError.invalidValue(control: key, value: text, reason: reason) }
        switch type {
        case .string:
            return .string(text)
        case .boolean:
            switch text.lowercased() {
            case "1", "true", "yes", "on": return .boolean(true)
            case "0", "false", "no", "off": return .boolean(false)
            default: throw invalid("a boolean is 0 or 1")
            }
        case .menu, .integerMenu:
            if let item = menuItems.first(where: { $0.name?.lowercased() == text.lowercased() }) {
                return .menu(Int32(truncatingIfNeeded: item.index))
            }
            if let index = number() {
                guard let narrow = Int32(exactly: index) else { throw invalid("not a menu index") }
                return .menu(narrow)
            }
            let names = menuItems.map(\.label).joined(separator: ", ")
            throw invalid("not a menu item (\(names))")
        case .integer, .button:
            guard let value = number() else { throw invalid("not a number") }
            guard let narrow = Int32(exactly: value) else {
                throw ControlError.outOfRange(
                    control: key, value: value, range: range, nearest: range.nearestValid(value))
            }
            return .integer(narrow)
        case .integer64:
            guard let value = number() else { throw invalid("not a number") }
            return .integer64(value)
        case .bitmask:
            guard let value = number(), let bits = UInt32(exactly: value) else { throw invalid("not a 32-bit mask") }
            return .bitmask(bits)
        default:
            throw invalid("a \(type) control cannot be set from text")
        }
    }
}
