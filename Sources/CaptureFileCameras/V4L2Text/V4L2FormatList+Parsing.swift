import CaptureCore

extension V4L2FormatList {
    /// Parses the output of `v4l2-ctl --list-formats-ext`.
    ///
    /// Reads the current layout (`[0]: 'YUYV' (YUYV 4:2:2, csc-colorspace)`) and the older one
    /// (`Index : 0`, `Type : Video Capture`, `Pixel Format: 'MJPG' (compressed)`, `Name : Motion-JPEG`), with
    /// tabs or spaces, blank lines anywhere, CRLF line ends, and the optional `ioctl: VIDIOC_ENUM_FMT` and
    /// `Type: …` header lines. Sizes may be discrete, stepwise or continuous; intervals discrete, stepwise or
    /// continuous. Each printed interval becomes an exact fraction that prints the same seconds and fps figures:
    /// numerator 1, then 2, then 1001 over a multiple of 1000, else the simplest fraction (`0.033s (30.000 fps)` is
    /// 1/30, `0.080s (12.500 fps)` 2/25, `0.033s (29.970 fps)` 1001/30000); a stepwise step that prints like the
    /// minimum is the minimum. Repeated sizes and intervals are kept as listed (not deduplicated), so ``render()``
    /// reproduces the dump. The printed format index is not checked (entries are numbered by their order).
    ///
    /// - Throws: `CaptureError.Code.malformedFormatList` with the message `line N: <what is wrong>: <the line>`
    ///   (lines counted from 1).
    public static func parse(_ text: String) throws(CaptureError) -> V4L2FormatList {
        var parser = FormatListParser()
        var number = 0
        for line in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            var content = Substring(line)
            if content.unicodeScalars.last == "\r" { content = Substring(content.unicodeScalars.dropLast()) }
            try parser.consume(content, number: number)
        }
        return try parser.finish()
    }
}

/// The line-by-line state of ``V4L2FormatList/parse(_:)``.
private struct FormatListParser {
    private var bufferType: String?
    private var sawHeader = false
    private var entries: [V4L2FormatList.Entry] = []
    /// The line of an old-layout `Index` line still waiting for its `Pixel Format` line.
    private var pendingIndexLine: (number: Int, text: String)?
    /// Whether the last entry came from an old-layout `Pixel Format` line and has not had its `Name` yet.
    private var awaitingName = false
    private var firstLine: (number: Int, text: String)?
    private var intervals: [String: FrameInterval] = [:]

    // The line being read, for error messages.
    private var number = 0
    private var line = ""

    mutating func consume(_ raw: Substring, number: Int) throws(CaptureError) {
        let trimmed = raw.trimmingSpaces
        guard !trimmed.isEmpty else { return }
        self.number = number
        self.line = String(trimmed)
        if firstLine == nil { firstLine = (number, line) }

        if trimmed.hasPrefix("[") { return try formatHeader(trimmed) }
        guard let colon = trimmed.firstIndex(of: ":") else { throw failure("unrecognised line") }
        let key = trimmed[..<colon].trimmingSpaces
        let value = trimmed[trimmed.index(after: colon)...].trimmingSpaces
        switch key {
        case "ioctl":
            guard value == "VIDIOC_ENUM_FMT" else { throw failure("not a VIDIOC_ENUM_FMT listing") }
            guard entries.isEmpty, pendingIndexLine == nil else { throw failure("a second listing starts here") }
            sawHeader = true
        case "Type":
            guard !value.isEmpty else { throw failure("empty buffer type") }
            if let bufferType, bufferType != value {
                throw failure("buffer type changes from '\(bufferType)'")
            }
            bufferType = String(value)
        case "Index":
            try checkNoPendingIndex()
            guard Int(value).map({ $0 >= 0 }) == true else { throw failure("format index is not a number") }
            pendingIndexLine = (number, line)
            awaitingName = false
        case "Pixel Format":
            try oldFormatHeader(value)
        case "Name":
            guard awaitingName, !entries.isEmpty else { throw failure("Name line without a Pixel Format line") }
            entries[entries.count - 1].pixelFormat.description = String(value)
            awaitingName = false
        case "Size":
            try size(value)
        case "Interval":
            try interval(value)
        default:
            throw failure("unrecognised line")
        }
    }

    mutating func finish() throws(CaptureError) -> V4L2FormatList {
        try checkNoPendingIndex()
        guard sawHeader || bufferType != nil || !entries.isEmpty else {
            let first = firstLine ?? (1, "")
            throw CaptureError(.malformedFormatList, "line \(first.number): no format list found: \(first.text)")
        }
        return V4L2FormatList(bufferType: bufferType ?? V4L2FormatList.videoCapture, entries: entries)
    }

    // MARK: - Pixel formats

    /// `[0]: 'YUYV' (YUYV 4:2:2, csc-colorspace, …)`.
    private mutating func formatHeader(_ text: Substring) throws(CaptureError) {
        try checkNoPendingIndex()
        guard let close = text.firstIndex(of: "]"), Int(text[text.index(after: text.startIndex)..<close]) != nil
        else { throw failure("format index is not a number") }
        var rest = text[text.index(after: close)...]
        guard rest.first == ":" else { throw failure("expected ':' after the format index") }
        rest = rest.dropFirst().trimmingSpaces
        let (pixelFormat, afterCode) = try fourCC(rest)
        guard afterCode.first == "(", afterCode.last == ")" else {
            throw failure("expected '(description)' after the FourCC")
        }
        var parts = afterCode.dropFirst().dropLast().splitOnCommaSpace()
        var flags: PixelFormatFlags = []
        while parts.count > 1, let last = parts.last, let flag = V4L2FormatList.flag(named: last) {
            flags.formUnion(flag)
            parts.removeLast()
        }
        let description = parts.joined(separator: ", ")
        entries.append(
            .init(
                pixelFormat: PixelFormatDescription(
                    pixelFormat: pixelFormat, description: description, flags: flags)))
        awaitingName = false
    }

    /// Old layout: `Pixel Format: 'MJPG' (compressed)`.
    private mutating func oldFormatHeader(_ value: Substring) throws(CaptureError) {
        pendingIndexLine = nil
        let (pixelFormat, afterCode) = try fourCC(value)
        var flags: PixelFormatFlags = []
        if !afterCode.isEmpty {
            guard afterCode.first == "(", afterCode.last == ")" else {
                throw failure("expected '(flags)' after the FourCC")
            }
            for name in afterCode.dropFirst().dropLast().splitOnCommaSpace() {
                guard let flag = V4L2FormatList.flag(named: name) else {
                    throw failure("unknown format flag '\(name)'")
                }
                flags.formUnion(flag)
            }
        }
        entries.append(
            .init(pixelFormat: PixelFormatDescription(pixelFormat: pixelFormat, description: "", flags: flags)))
        awaitingName = true
    }

    /// `'YUYV'` or `'Y16 -BE'` at the start of `text`; returns the format and the trimmed text after it.
    private func fourCC(_ text: Substring) throws(CaptureError) -> (PixelFormat, Substring) {
        guard text.first == "'", let close = text.dropFirst().firstIndex(of: "'") else {
            throw failure("expected a quoted FourCC")
        }
        let code = text[text.index(after: text.startIndex)..<close]
        let rest = text[text.index(after: close)...].trimmingSpaces
        if code.count == 7, code.hasSuffix("-BE"), let base = PixelFormat(fourCC: code.prefix(4)) {
            return (PixelFormat(rawValue: base.rawValue | 1 << 31), rest)
        }
        guard let format = PixelFormat(fourCC: code) else { throw failure("'\(code)' is not a FourCC") }
        return (format, rest)
    }

    private func checkNoPendingIndex() throws(CaptureError) {
        guard let pending = pendingIndexLine else { return }
        throw CaptureError(
            .malformedFormatList, "line \(pending.number): format entry has no Pixel Format line: \(pending.text)")
    }

    // MARK: - Sizes

    /// `Discrete 640x480`, `Stepwise 16x16 - 1920x1080 with step 2/2`, `Continuous 16x16 - 1920x1080`.
    private mutating func size(_ value: Substring) throws(CaptureError) {
        try checkNoPendingIndex()
        guard let entry = entries.indices.last else { throw failure("size line outside a pixel format") }
        let words = value.split(whereSeparator: { $0 == " " || $0 == "\t" })
        let size: FrameSize
        switch words.first.map(String.init) ?? "" {
        case "Discrete":
            guard words.count == 2, let only = Dimensions(parsing: words[1]) else { throw failure("bad discrete size") }
            size = .discrete(only)
        case "Stepwise":
            guard words.count == 7, words[2] == "-", words[4] == "with", words[5] == "step",
                let min = Dimensions(parsing: words[1]), let max = Dimensions(parsing: words[3]),
                let step = Self.step(words[6])
            else { throw failure("bad stepwise size (expected 'Stepwise WxH - WxH with step W/H')") }
            size = .stepwise(min: min, max: max, step: step)
        case "Continuous":
            guard words.count == 4, words[2] == "-", let min = Dimensions(parsing: words[1]),
                let max = Dimensions(parsing: words[3])
            else { throw failure("bad continuous size (expected 'Continuous WxH - WxH')") }
            size = .continuous(min: min, max: max)
        default:
            throw failure("unknown size type")
        }
        entries[entry].formats.append(
            CaptureFormat(pixelFormat: entries[entry].pixelFormat.pixelFormat, size: size, frameRates: .none))
    }

    /// `2/2`.
    private static func step(_ text: Substring) -> Dimensions? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w >= 0, h >= 0 else { return nil }
        return Dimensions(width: w, height: h)
    }

    // MARK: - Intervals

    /// `Discrete 0.033s (30.000 fps)`, `Continuous 0.033s - 1.000s (1.000-30.000 fps)`,
    /// `Stepwise 0.033s - 1.000s with step 0.033s (1.000-30.000 fps)`. The `(… fps)` part is optional (old
    /// versions printed none for some types), and old versions' `0.033 s` spacing is accepted.
    private mutating func interval(_ value: Substring) throws(CaptureError) {
        guard let entry = entries.indices.last, let last = entries[entry].formats.indices.last else {
            throw failure("interval line outside a frame size")
        }
        var scanner = FigureScanner(value.trimmingSpaces)
        let kind = scanner.word()
        let rates: FrameRates
        switch kind {
        case "Discrete":
            guard let seconds = scanner.seconds() else { throw failure("bad discrete interval") }
            let fps = try fpsFigures(&scanner, count: 1)
            rates = .discrete([try exact(seconds, fps?[0])])
        case "Continuous", "Stepwise":
            guard let min = scanner.seconds(), scanner.literal("-"), let max = scanner.seconds() else {
                throw failure("bad \(kind.lowercased()) interval")
            }
            var step: String?
            if kind == "Stepwise" {
                guard scanner.literal("with"), scanner.literal("step"), let figure = scanner.seconds() else {
                    throw failure("bad stepwise interval (expected 'with step <seconds>s')")
                }
                step = figure
            }
            // The rates are printed slowest first: the max interval's fps, then the min interval's.
            let fps = try fpsFigures(&scanner, count: 2)
            let minimum = try exact(min, fps?[1]), maximum = try exact(max, fps?[0])
            if let step {
                // The step has no fps figure; when it prints like the minimum, it is taken to be the minimum.
                let stepInterval = step == min ? minimum : try exact(step, nil)
                rates = .stepwise(min: minimum, max: maximum, step: stepInterval)
            } else {
                rates = .continuous(min: minimum, max: maximum)
            }
        default:
            throw failure("unknown interval type")
        }
        guard scanner.atEnd else { throw failure("unexpected text after the interval") }
        let current = entries[entry].formats[last].frameRates
        if current == .none {
            entries[entry].formats[last].frameRates = rates
        } else if case .discrete(let listed) = current, case .discrete(let more) = rates {
            entries[entry].formats[last].frameRates = .discrete(listed + more)
        } else {
            throw failure("a stepwise or continuous interval must be the only interval of its size")
        }
    }

    /// `(30.000 fps)` or `(1.000-30.000 fps)`, or nothing.
    private func fpsFigures(_ scanner: inout FigureScanner, count: Int) throws(CaptureError) -> [String]? {
        guard scanner.literal("(") else { return nil }
        var figures: [String] = []
        for index in 0..<count {
            if index > 0 { guard scanner.literal("-") else { throw failure("bad fps range") } }
            guard let figure = scanner.figure() else { throw failure("bad fps figure") }
            figures.append(figure)
        }
        guard scanner.literal("fps"), scanner.literal(")") else { throw failure("expected 'fps)'") }
        return figures
    }

    /// The exact interval for printed figures, cached: a dump repeats the same few intervals many times.
    private mutating func exact(_ seconds: String, _ fps: String?) throws(CaptureError) -> FrameInterval {
        let key = seconds + "|" + (fps ?? "")
        if let known = intervals[key] { return known }
        guard let interval = V4L2FormatList.interval(seconds: seconds, fps: fps) else {
            throw failure(
                fps == nil ? "no interval prints as \(seconds)s" : "\(seconds)s and \(fps ?? "") fps disagree")
        }
        intervals[key] = interval
        return interval
    }

    private func failure(_ what: String) -> CaptureError {
        CaptureError(.malformedFormatList, "line \(number): \(what): \(line)")
    }
}

/// Reads the words and `%.3f` figures of an interval line.
private struct FigureScanner {
    private var rest: Substring

    init(_ text: Substring) { rest = text }

    var atEnd: Bool { rest.trimmingSpaces.isEmpty }

    private mutating func skipSpaces() { rest = rest.drop { $0 == " " || $0 == "\t" } }

    /// Letters up to the next space.
    mutating func word() -> String {
        skipSpaces()
        let word = rest.prefix { $0.isLetter }
        rest = rest.dropFirst(word.count)
        return String(word)
    }

    /// Skips `text` if it comes next (after spaces).
    mutating func literal(_ text: String) -> Bool {
        skipSpaces()
        guard rest.hasPrefix(text) else { return false }
        rest = rest.dropFirst(text.count)
        return true
    }

    /// Digits and points, as `%.3f` prints them.
    mutating func figure() -> String? {
        skipSpaces()
        let figure = rest.prefix { $0 == "." || ($0.isASCII && $0.isNumber) }
        guard V4L2FormatList.isFigure(figure) else { return nil }
        rest = rest.dropFirst(figure.count)
        return String(figure)
    }

    /// A figure followed by `s` (`0.033s`, or `0.033 s` in old versions).
    mutating func seconds() -> String? {
        guard let figure = figure(), literal("s") else { return nil }
        return figure
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    fileprivate var trimmingSpaces: Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) })
        else { return self[endIndex...] }
        return self[first...last]
    }

    /// Split on `", "` (a description may itself contain commas; flags are peeled off the end).
    fileprivate func splitOnCommaSpace() -> [Substring] {
        var parts: [Substring] = []
        var start = startIndex
        var index = startIndex
        while index < endIndex {
            let next = self.index(after: index)
            if self[index] == ",", next < endIndex, self[next] == " " {
                parts.append(self[start..<index])
                start = self.index(after: next)
                index = start
            } else {
                index = next
            }
        }
        parts.append(self[start...])
        return parts
    }
}
