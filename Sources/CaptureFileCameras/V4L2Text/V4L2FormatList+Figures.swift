import CaptureCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// How `v4l2-ctl` prints numbers and flags, and how printed figures turn back into exact values.
extension V4L2FormatList {
    /// The flag names in the order `v4l2-ctl` prints them (`fmtdesc_def` in v4l-utils' `v4l2-info.cpp`):
    /// table order, not bit order. The YCbCr-encoding bit is `csc-hsv` for the HSV formats.
    static let flagNames: [(flag: PixelFormatFlags, name: String)] = [
        (.compressed, "compressed"),
        (.emulated, "emulated"),
        (.continuousBytestream, "continuous-bytestream"),
        (.dynamicResolution, "dyn-resolution"),
        (.encoderCapFrameInterval, "enc-cap-frame-interval"),
        (.cscColorspace, "csc-colorspace"),
        (.cscYCbCr, "csc-ycbcr"),
        (.cscQuantization, "csc-quantization"),
        (.cscTransferFunction, "csc-xfer-func"),
        (.metaLineBased, "meta-line-based"),
    ]

    /// `V4L2_PIX_FMT_HSV24` and `V4L2_PIX_FMT_HSV32`, for which `v4l2-ctl` names the encoding flag `csc-hsv`.
    static let hsvFormats: Set<PixelFormat> = [PixelFormat(fourCC: "HSV3"), PixelFormat(fourCC: "HSV4")]
        .compactMap { $0 }.reduce(into: []) { $0.insert($1) }

    /// `fmtdesc2s`: the comma-separated flag names, unknown bits last as `0x%08x`.
    static func flagText(_ flags: PixelFormatFlags, pixelFormat: PixelFormat) -> String {
        var remaining = flags.rawValue
        var names: [String] = []
        for (flag, name) in flagNames where remaining & flag.rawValue != 0 {
            names.append(flag == .cscYCbCr && hsvFormats.contains(pixelFormat) ? "csc-hsv" : name)
            remaining &= ~flag.rawValue
        }
        if remaining != 0 { names.append(hex8(UInt64(remaining))) }
        return names.joined(separator: ", ")
    }

    /// The flag a printed name stands for: a known name (including `csc-hsv`), or a hexadecimal value as
    /// `v4l2-ctl` prints unknown bits (`0x00000400`, or `00000400` in old versions).
    static func flag(named name: some StringProtocol) -> PixelFormatFlags? {
        if name == "csc-hsv" { return .cscYCbCr }
        if let known = flagNames.first(where: { $0.name == name }) { return known.flag }
        let digits = name.hasPrefix("0x") ? Substring(name.dropFirst(2)) : Substring(name)
        guard digits.count == 8, let bits = UInt32(digits, radix: 16), bits != 0 else { return nil }
        return PixelFormatFlags(rawValue: bits)
    }

    /// `printf("%.3f", value)`, exactly as the C library formats it (the same code `v4l2-ctl` runs).
    static func fixed3(_ value: Double) -> String {
        var capacity = 64
        while true {
            let (written, text) = withUnsafeTemporaryAllocation(of: CChar.self, capacity: capacity) { buffer in
                let written = withVaList([value]) { vsnprintf(buffer.baseAddress, capacity, "%.3f", $0) }
                let count = Int(max(0, min(written, Int32(capacity - 1))))
                let bytes = UnsafeRawBufferPointer(start: buffer.baseAddress, count: count)
                return (Int(written), String(decoding: bytes, as: UTF8.self))
            }
            if written < capacity { return text }
            capacity = written + 1
        }
    }

    /// `fract2sec`: the interval in seconds, `%.3f`.
    static func secondsText(_ interval: FrameInterval) -> String {
        fixed3(Double(interval.numerator) / Double(interval.denominator))
    }

    /// `fract2fps`: the rate, `%.3f`.
    static func fpsText(_ interval: FrameInterval) -> String {
        fixed3(Double(interval.denominator) / Double(interval.numerator))
    }

    /// Whether `text` is a figure as `%.3f` prints a finite non-negative number: digits (no leading zero but a lone
    /// `0`), a point, three digits. `030.000` is not one: no interval prints it.
    static func isFigure(_ text: some StringProtocol) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 2 && !parts[0].isEmpty && parts[1].count == 3
            && parts.allSatisfy { $0.allSatisfy { $0.isASCII && $0.isNumber } }
            && (parts[0].count == 1 || parts[0].first != "0")
    }

    /// An exact interval `n/d` whose seconds print as `seconds` and, when given, whose rate prints as `fps`.
    ///
    /// Numerators 1 (whole rates), 2 (half rates such as 12.5 and 7.5 fps) and 1001 over a multiple of 1000 (the
    /// NTSC family, 30000/1001 fps) are tried first, in that order, each with the smallest denominator that fits;
    /// otherwise the simplest fraction (smallest numerator and denominator) that reproduces the figures. So
    /// "0.033s (30.000 fps)" is 1/30, "0.080s (12.500 fps)" 2/25 and "0.033s (29.970 fps)" 1001/30000. Returns `nil`
    /// when no fraction with a numerator up to a million reproduces the figures.
    static func interval(seconds: String, fps: String?) -> FrameInterval? {
        guard isFigure(seconds), let s = Double(seconds) else { return nil }
        var f: Double?
        if let fps {
            guard isFigure(fps), let value = Double(fps) else { return nil }
            f = value
        }
        let half = 0.0005
        // Figures that no interval can print (say "21.000s (1.000 fps)") fail at once instead of after a million
        // numerators: the seconds and the inverse of the rate must overlap, each widened by its rounding.
        if let f, f > half, s + half < 1 / (f + half) || s - half > 1 / (f - half) { return nil }
        /// The smallest denominator `d`, a multiple of `multiple`, for which `n/d` prints as the figures.
        func denominator(for n: Int, multiple: Int = 1) -> Int? {
            let nd = Double(n)
            // Denominators allowed by each figure, widened by one for the rounding of the bounds.
            var low = (nd / (s + half)).rounded(.down) - 1
            var high = s > half ? (nd / (s - half)).rounded(.up) + 1 : (f == nil ? low + 3 : .infinity)
            if let f {
                low = max(low, (f - half) * nd - 1)
                high = min(high, (f + half) * nd + 1)
            }
            guard high >= max(low, 1), high < Double(UInt32.max) else { return nil }
            var d = max(1, Int(low.rounded(.up)))
            d = (d + multiple - 1) / multiple * multiple
            while Double(d) <= high {
                let candidate = FrameInterval(numerator: UInt32(n), denominator: UInt32(d))
                if secondsText(candidate) == seconds, f == nil || fpsText(candidate) == fps { return d }
                d += multiple
            }
            return nil
        }
        for (n, multiple) in [(1, 1), (2, 1), (1001, 1000)] {
            if let d = denominator(for: n, multiple: multiple) {
                return FrameInterval(numerator: UInt32(n), denominator: UInt32(d))
            }
        }
        // Otherwise the simplest fraction in the range of values both figures allow, found by walking the
        // Stern–Brocot tree (a few dozen steps, where trying numerators one by one took up to a million: a fuzzer's
        // timeout). Its numerator is then tried with the exact printf check, as are a few neighbours, since the range
        // is only as exact as the rounding of its bounds.
        var low = s - half
        var high = s + half
        if let f {
            // A rate that prints 0.000 (an interval over 2000 s) bounds the interval from below only.
            low = max(low, 1 / (f + half))
            if f > half { high = min(high, 1 / (f - half)) }
        }
        guard high > 0, low <= high else { return nil }
        // A bound can be a tie that printf rounds the other way (2449/16 = 153.0625 prints 153.062): then the
        // range is narrowed a little inside its bounds and walked again.
        for inset in [0, 1e-9, 1e-6] {
            let margin = (high - low) * inset
            // Past a million the printf check of one numerator alone would try thousands of denominators; no
            // driver's interval needs one.
            guard let simplest = simplestFraction(in: max(low + margin, 0)...(high - margin)),
                simplest.numerator <= 1_000_000
            else { continue }
            for n in max(1, simplest.numerator - 2)...(simplest.numerator + 2) {
                if let d = denominator(for: n) { return FrameInterval(numerator: UInt32(n), denominator: UInt32(d)) }
            }
        }
        return nil
    }

    /// The fraction with the smallest numerator and denominator in `range` (both ends included; `range` within
    /// 0…2³²), or `nil` when it needs a numerator or denominator beyond 2³² or more than 64 steps of the Stern–Brocot
    /// tree's continued-fraction walk.
    static func simplestFraction(in range: ClosedRange<Double>) -> (numerator: Int, denominator: Int)? {
        // Continued fractions: p/q converges on the range; each step takes the whole part shared by both ends.
        var (low, high) = (range.lowerBound, range.upperBound)
        var (p0, q0, p1, q1) = (0, 1, 1, 0)  // convergents h(-2)/k(-2) = 0/1 and h(-1)/k(-1) = 1/0
        for _ in 0..<64 {
            let whole = low.rounded(.down)
            let limit = Double(UInt32.max)
            guard whole <= limit else { return nil }
            if whole + 1 <= high || whole == low {
                // An integer lies in the range: the smallest one above `low` (or `low` itself) ends the walk.
                let a = whole == low ? Int(whole) : Int(whole) + 1
                let (p, q) = (a * p1 + p0, a * q1 + q0)
                guard p <= Int(UInt32.max), q <= Int(UInt32.max), q > 0 else { return nil }
                return (p, q)
            }
            let a = Int(whole)
            (p0, q0, p1, q1) = (p1, q1, a * p1 + p0, a * q1 + q0)
            guard p1 <= Int(UInt32.max), q1 <= Int(UInt32.max) else { return nil }
            // Both ends share `a`: continue with the reciprocals of their fractional parts, which swaps them.
            let (fractionLow, fractionHigh) = (low - whole, high - whole)
            guard fractionLow > 0 else { return nil }
            (low, high) = (1 / fractionHigh, 1 / fractionLow)
        }
        return nil
    }
}
