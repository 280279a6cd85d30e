import CaptureCore

extension V4L2ControlList {
    /// Parses the output of `v4l2-ctl --list-ctrls-menus` (or `--list-ctrls`, which has no menu items).
    ///
    /// Reads every layout `v4l2-ctl` has printed (``Layout``): with or without the hex id after the name, menu
    /// values with or without the item name, bitmask values in decimal or `0x%08x`, array dimensions as `dims=[…]`
    /// or `[…]`; class headings; menu item lines indented by tabs or spaces; CRLF line ends and blank lines. The
    /// layout is recorded so that ``render()`` reproduces the dump. Values are typed by the control's type: menu
    /// values are item indices, strings are unescaped, an area `WxH` becomes its 8 payload bytes.
    ///
    /// - Throws: `CaptureError.Code.malformedControlList` with the message `line N: <what is wrong>: <the line>`.
    public static func parse(_ text: String) throws(CaptureError) -> V4L2ControlList {
        var parser = ControlListParser()
        var number = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            var content = Substring(line)
            if content.last == "\r" { content = content.dropLast() }
            try parser.consume(content, number: number)
        }
        return try parser.finish()
    }
}

/// The line-by-line state of ``V4L2ControlList/parse(_:)``.
private struct ControlListParser {
    private var entries: [V4L2ControlList.Entry] = []
    private var withIDs: Bool?
    private var legacyEvidence = false
    private var currentEvidence = false
    /// Menu values printed without an item name although the item is listed (only 1.14–1.21 do that).
    private var bareMenuValues: [(entry: Int, index: Int64)] = []
    /// Menu values printed with their item (`3 (Aperture Priority Mode)`, `4 (5 0x5)`): the item text by entry.
    private var namedMenuValues: [(entry: Int, text: Substring)] = []
    private var sawMenuItemLine = false
    private var number = 0
    private var line = ""

    mutating func consume(_ raw: Substring, number: Int) throws(CaptureError) {
        let trimmed = raw.drop { $0 == " " || $0 == "\t" }
        guard !trimmed.allSatisfy({ $0 == " " || $0 == "\t" }) else { return }
        self.number = number
        self.line = String(raw)
        if let control = try controlLine(trimmed) {
            entries.append(control)
            return
        }
        if try menuItemLine(trimmed) { return }
        guard trimmed.count == raw.count else { throw failure("unrecognised line") }
        let heading = String(trimmed.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
        // A class heading is a name ("User Controls", "Camera Controls"); a line with a colon is a damaged control
        // line, which would render as a heading that no longer reads back the same.
        guard !heading.contains(":") else { throw failure("unrecognised line (neither a control nor a class heading)") }
        entries.append(
            V4L2ControlList.Entry(ControlDescription(id: 0, name: heading, key: heading, type: .controlClass)))
    }

    func finish() throws(CaptureError) -> V4L2ControlList {
        guard entries.contains(where: { $0.description.type != .controlClass }) else {
            throw CaptureError(.malformedControlList, "no control found (not a 'v4l2-ctl --list-ctrls-menus' listing)")
        }
        var entries = self.entries
        if withIDs == false {
            // No ids printed: standard controls get theirs from their names, others a private id each
            // (`V4L2_CID_PRIVATE_BASE` upwards) so that every control stays addressable.
            var privateID: UInt32 = 0x0800_0000
            for index in entries.indices where entries[index].description.type != .controlClass {
                if let id = V4L2ControlID.standardKeys[entries[index].description.key] {
                    entries[index].description.id = id
                } else {
                    entries[index].description.id = privateID
                    privateID += 1
                }
            }
        }
        // A heading's id is its class's: the class of the control that follows it, plus 1 (`V4L2_CID_*_CLASS`).
        for index in entries.indices where entries[index].description.type == .controlClass {
            if let next = entries[(index + 1)...].first(where: { $0.description.type != .controlClass }) {
                entries[index].description.id = next.description.controlClass | 1
            }
        }
        // A `--list-ctrls` dump (no item lines) still names the selected item in each menu value: keep that text.
        let listsMenuItems = sawMenuItemLine || !entries.contains { $0.description.type.isMenu }
        if !listsMenuItems {
            for (entry, text) in namedMenuValues { entries[entry].valueLabel = String(text) }
        } else {
            // v4l2-ctl names the selected item with the name it lists for it: a value line that names another
            // (a damaged or hand-edited dump) would render as something else, so it is refused.
            for (entry, text) in namedMenuValues {
                let control = entries[entry].description
                guard let index = entries[entry].value?.integerValue, let item = control.menuItem(index) else {
                    continue
                }
                let listed = V4L2ControlList.selectedItemText(item, type: control.type)
                guard listed == text else {
                    throw CaptureError(
                        .malformedControlList,
                        "\(control.name): the value names '\(text)' but menu item \(index) is listed as '\(listed)'")
                }
            }
        }
        let layout: V4L2ControlList.Layout
        if withIDs == false {
            layout = .withoutIDs
        } else if legacyEvidence {
            layout = .withIDs
        } else if currentEvidence {
            layout = .current
        } else {
            let listed = bareMenuValues.contains { entries[$0.entry].description.menuItem($0.index) != nil }
            layout = listed ? .withIDs : .current
        }
        return V4L2ControlList(entries: entries, layout: layout, listsMenuItems: listsMenuItems)
    }

    // MARK: - Control lines

    /// A control line, or `nil` when the line is not shaped like one (`key [0xID] (type)<spaces>: …`).
    private mutating func controlLine(_ text: Substring) throws(CaptureError) -> V4L2ControlList.Entry? {
        guard let space = text.firstIndex(of: " ") else { return nil }
        let key = text[..<space]
        guard key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }), key.first?.isNumber != true else {
            return nil
        }
        var rest = text[space...].drop { $0 == " " }
        var id: UInt32 = 0
        let hasID = rest.hasPrefix("0x")
        if hasID {
            let token = rest.prefix { $0 != " " }
            guard let parsed = UInt32(token.dropFirst(2), radix: 16) else { return nil }
            id = parsed
            rest = rest.dropFirst(token.count).drop { $0 == " " }
        }
        guard rest.hasPrefix("("), let close = rest.firstIndex(of: ")") else { return nil }
        let typeName = String(rest[rest.index(after: rest.startIndex)..<close])
        rest = rest[rest.index(after: close)...].drop { $0 == " " }
        guard rest.hasPrefix(":") else { return nil }
        rest = rest.dropFirst()

        if let withIDs, withIDs != hasID { throw failure("some controls have a hex id and others do not") }
        withIDs = hasID
        var type: ControlType
        if typeName == "unknown" {
            type = ControlType(rawValue: 0)
        } else if let known = ControlType(v4l2CtlName: typeName), known != .controlClass {
            type = known
        } else {
            throw failure("unknown control type '\(typeName)'")
        }

        var fields: [String: Int64] = [:]
        var valueText: Substring?
        var dimensions: [UInt32] = []
        var flags = ControlFlags()
        rest = rest.drop { $0 == " " }
        while !rest.isEmpty {
            if rest.hasPrefix("value=") {
                let body = rest.dropFirst("value=".count)
                if let flagsStart = body.ranges(of: " flags=").last {
                    valueText = body[..<flagsStart.lowerBound]
                    rest = body[flagsStart.lowerBound...].drop { $0 == " " }
                } else {
                    valueText = body
                    rest = rest[rest.endIndex...]
                }
                continue
            }
            if rest.hasPrefix("flags=") {
                flags = try parseFlags(rest.dropFirst("flags=".count))
                break
            }
            let token = rest.prefix { $0 != " " }
            rest = rest.dropFirst(token.count).drop { $0 == " " }
            if token.hasPrefix("dims=") {
                dimensions = try parseDimensions(token.dropFirst("dims=".count))
                currentEvidence = true
            } else if token.hasPrefix("[") {
                dimensions = try parseDimensions(token)
                legacyEvidence = true
            } else if let equals = token.firstIndex(of: "=") {
                let name = String(token[..<equals])
                let number = token[token.index(after: equals)...]
                if name == "type", type.rawValue == 0, let raw = UInt32(number, radix: 16) {
                    type = ControlType(rawValue: raw)
                    continue
                }
                guard ["min", "max", "step", "default"].contains(name), fields[name] == nil else {
                    throw failure("unexpected field '\(name)'")
                }
                guard let parsed = parseNumber(number) else { throw failure("\(name) is not a number") }
                fields[name] = parsed
            } else {
                throw failure("unexpected text '\(token)'")
            }
        }

        var description = ControlDescription(
            id: id, name: String(key), key: String(key), type: type, minimum: fields["min"] ?? 0,
            maximum: fields["max"] ?? 0, step: UInt64(bitPattern: fields["step"] ?? 0),
            defaultValue: fields["default"] ?? 0, flags: flags, dimensions: dimensions)
        description.elementSize = Self.elementSize(description)
        // The kernel caps a control's elements well below 2³²; a dump whose dimensions multiply past that is damaged.
        var count: UInt32 = 1
        for dimension in dimensions {
            let (product, overflow) = count.multipliedReportingOverflow(by: dimension)
            guard !overflow else { throw failure("the dimensions hold more than 2^32 elements") }
            count = product
        }
        description.elementCount = count
        let value = try valueText.map { text throws(CaptureError) in try parseValue(text, for: description) } ?? nil
        return V4L2ControlList.Entry(description, value: value)
    }

    /// The size of one element, as the kernel reports it for these types.
    private static func elementSize(_ control: ControlDescription) -> UInt32 {
        switch control.type {
        case .u8: 1
        case .u16: 2
        case .integer64, .area: 8
        case .string: UInt32(clamping: control.maximum >= Int64(UInt32.max) ? Int64(UInt32.max) : control.maximum + 1)
        default: 4
        }
    }

    /// A decimal number, or `0x…` hex (bitmask fields), as a 64-bit pattern.
    private func parseNumber(_ text: Substring) -> Int64? {
        if text.hasPrefix("0x") { return UInt64(text.dropFirst(2), radix: 16).map { Int64(bitPattern: $0) } }
        return Int64(text)
    }

    private func parseDimensions(_ text: Substring) throws(CaptureError) -> [UInt32] {
        var dimensions: [UInt32] = []
        for part in text.split(separator: "]") {
            guard part.hasPrefix("["), let size = UInt32(part.dropFirst()) else {
                throw failure("malformed dimensions '\(text)'")
            }
            dimensions.append(size)
        }
        guard !dimensions.isEmpty, dimensions.count <= 4 else { throw failure("malformed dimensions '\(text)'") }
        return dimensions
    }

    private func parseFlags(_ text: Substring) throws(CaptureError) -> ControlFlags {
        var flags = ControlFlags()
        let names = ControlFlags.v4l2CtlNames + ControlFlags.newerNames
        for part in text.split(separator: ",") {
            let name = part.trimmingCharacters(in: " ")
            if let flag = names.first(where: { $0.1 == name })?.0 {
                flags.insert(flag)
            } else if name.hasPrefix("0x"), let bits = UInt32(name.dropFirst(2), radix: 16) {
                flags.insert(ControlFlags(rawValue: bits))
            } else {
                throw failure("unknown flag '\(name)'")
            }
        }
        return flags
    }

    /// The value text after `value=`, typed by the control.
    private mutating func parseValue(
        _ text: Substring, for control: ControlDescription
    ) throws(CaptureError) -> ControlValue? {
        switch control.type {
        case .integer, .boolean:
            guard let number = Int32(text) else { throw failure("the value is not a 32-bit number") }
            return ControlValue.number(Int64(number), type: control.type)
        case .button:
            guard Int32(text) != nil else { throw failure("the value is not a number") }
            return nil
        case .integer64:
            guard let number = Int64(text) else { throw failure("the value is not a 64-bit number") }
            return .integer64(number)
        case .menu, .integerMenu:
            let digits = text.prefix { $0 == "-" || $0.isNumber }
            guard let index = Int32(digits) else { throw failure("the menu value is not a number") }
            let suffix = text.dropFirst(digits.count)
            if suffix.isEmpty {
                bareMenuValues.append((entries.count, Int64(index)))
            } else if suffix.hasPrefix(" (") && suffix.hasSuffix(")") {
                currentEvidence = true
                namedMenuValues.append((entries.count, suffix.dropFirst(2).dropLast()))
            } else {
                throw failure("unexpected text after the menu value")
            }
            return .menu(index)
        case .bitmask:
            if text.hasPrefix("0x") {
                guard let bits = UInt32(text.dropFirst(2), radix: 16) else { throw failure("malformed bitmask") }
                legacyEvidence = true
                return .bitmask(bits)
            }
            guard let number = Int32(text) else { throw failure("malformed bitmask value") }
            currentEvidence = true
            return .bitmask(UInt32(bitPattern: number))
        case .string:
            guard text.count >= 2, text.hasPrefix("'"), text.hasSuffix("'") else {
                throw failure("a string value must be quoted")
            }
            return .string(try unescape(text.dropFirst().dropLast()))
        case .area:
            let parts = text.split(separator: "x")
            guard parts.count == 2, let width = Int32(parts[0]), let height = Int32(parts[1]) else {
                throw failure("an area value must be WIDTHxHEIGHT")
            }
            return .payload(
                littleEndianBytes(UInt32(bitPattern: width)) + littleEndianBytes(UInt32(bitPattern: height)))
        case .u8, .u16, .u32:
            guard let number = UInt32(text) else { throw failure("the value is not an unsigned number") }
            return .payload(Array(littleEndianBytes(number).prefix(Int(Self.elementSize(control)))))
        default:
            throw failure("a value for a control of type \(control.type) cannot be read")
        }
    }

    /// Reverses `safename`: `\n`, `\r`, `\f`, `\\` and `\xNN`.
    private func unescape(_ text: Substring) throws(CaptureError) -> String {
        var bytes: [UInt8] = []
        var input = Array(text.utf8)[...]
        while let byte = input.popFirst() {
            guard byte == 0x5c else {
                bytes.append(byte)
                continue
            }
            switch input.popFirst() {
            case 0x6e: bytes.append(0x0a)
            case 0x72: bytes.append(0x0d)
            case 0x66: bytes.append(0x0c)
            case 0x5c: bytes.append(0x5c)
            case 0x78:
                let digits = input.prefix(2)
                input = input.dropFirst(2)
                guard digits.count == 2, let value = UInt8(String(decoding: digits, as: UTF8.self), radix: 16) else {
                    throw failure("malformed \\x escape in the string")
                }
                bytes.append(value)
            default: throw failure("unknown escape in the string")
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: - Menu items

    /// A menu item line (`\t\t\t\t1: Manual Mode`, `\t\t\t\t2: 2 (0x2)`) belonging to the last control.
    private mutating func menuItemLine(_ text: Substring) throws(CaptureError) -> Bool {
        let digits = text.prefix { $0 == "-" || $0.isNumber }
        guard !digits.isEmpty, let index = Int64(digits), text.dropFirst(digits.count).hasPrefix(":") else {
            return false
        }
        guard let last = entries.indices.last, entries[last].description.type.isMenu else {
            throw failure("a menu item outside a menu control")
        }
        sawMenuItemLine = true
        var body = text.dropFirst(digits.count + 1)
        if body.hasPrefix(" ") { body = body.dropFirst() }
        var control = entries[last].description
        guard index >= control.minimum, index <= control.maximum else {
            throw failure("menu item \(index) is outside \(control.minimum)...\(control.maximum)")
        }
        if control.type == .menu {
            control.menuItems.append(ControlMenuItem(index: index, name: String(body)))
        } else {
            guard let open = body.firstIndex(of: " "), let number = Int64(body[..<open]) else {
                throw failure("an integer-menu item must be '<index>: <number> (0x<hex>)'")
            }
            control.menuItems.append(ControlMenuItem(index: index, value: number))
        }
        entries[last].description = control
        return true
    }

    private func failure(_ what: String) -> CaptureError {
        CaptureError(.malformedControlList, "line \(number): \(what): \(line)")
    }
}

/// The four little-endian bytes of `value`.
func littleEndianBytes(_ value: UInt32) -> [UInt8] {
    (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
}

extension Substring {
    /// The text without `character` at either end.
    fileprivate func trimmingCharacters(in character: Character) -> String {
        String(drop { $0 == character }.reversed().drop { $0 == character }.reversed())
    }
}
