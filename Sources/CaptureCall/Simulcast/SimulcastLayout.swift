public import CaptureCore

/// The simulcast encodings libwebrtc makes of one camera input: how many layers the input size allows, their sizes
/// and their bit-rate bounds, lowest resolution first (libwebrtc's `cricket::GetSimulcastConfig` for VP8, camera
/// content, without field trials).
///
/// ```swift
/// let layout = SimulcastLayout(input: Dimensions(width: 1280, height: 720), maxLayers: 3, temporalLayers: 3)
/// // 320x180 30/150/200, 640x360 150/500/700, 1280x720 600/2500/2500 (min/target/max kbit/s)
/// ```
///
/// A pure value: build it from any thread.
///
/// ## The rules (libwebrtc `video/config/simulcast.cc`)
/// - **Layer count.** At most `maxLayers`, and at most what the input size allows in ``table`` (the row whose
///   pixel count the input reaches; an input less than 10 % of the way down to that row uses the row above):
///   1280x720 and 960x540 allow 3, 640x480 and 640x360 allow 2, 320x180 allows 1
///   (`LimitSimulcastLayerCount`, `kDefaultMaxRoundupRate` 0.1).
/// - **Sizes.** The top layer is the input with both sides rounded down to a multiple of 2^(layers − 1)
///   (`NormalizeSimulcastSize`); each lower layer halves the width and height of the one above (integer division).
/// - **Rates.** Each layer's max, target and min are interpolated by pixel count between the two rows of ``table``
///   around it (`InterpolateSimulcastFormat`: a `float` fraction, each term rounded to a whole bit/s); above 1920x1080
///   the 1920x1080 row applies, and below 320x180 its row does (the lowest row takes the 320x180 figures unless
///   `WebRTC-LowresSimulcastBitrateInterpolation` is on, which it is not by default).
/// - **Temporal layers.** With fewer than 3 temporal layers the lowest layer's max and target are scaled by
///   0.4 / (the base layer's share): ×0.4/0.6 for two layers, ×0.4 for one, so that its base temporal layer keeps the
///   rate it has with three (`GetNormalSimulcastLayers`; the count is `WebRTC-VP8ConferenceTemporalLayers`, 3 by
///   default). Then max and target are raised to at least min.
/// - The kbit/s figures are the bit/s figures divided by 1000, truncated (`VideoCodecInitializer`).
public struct SimulcastLayout: Sendable, Hashable, Codable {
    /// One row of libwebrtc's VP8 table (`kSimulcastFormatsVP8`), in bit/s as there.
    public struct Row: Sendable, Hashable, Codable {
        /// The row's size.
        public var dimensions: Dimensions
        /// The most simulcast layers an input of this size is split into.
        public var maxLayers: Int
        /// The layer's bit rate as the top layer, in bit/s.
        public var maxBitsPerSecond: Int
        /// The layer's bit rate below a higher layer, in bit/s.
        public var targetBitsPerSecond: Int
        /// The lowest bit rate the layer is sent at, in bit/s.
        public var minBitsPerSecond: Int

        /// Creates a row.
        public init(
            dimensions: Dimensions, maxLayers: Int, maxBitsPerSecond: Int, targetBitsPerSecond: Int,
            minBitsPerSecond: Int
        ) {
            self.dimensions = dimensions
            self.maxLayers = maxLayers
            self.maxBitsPerSecond = maxBitsPerSecond
            self.targetBitsPerSecond = targetBitsPerSecond
            self.minBitsPerSecond = minBitsPerSecond
        }

        var pixels: Int { dimensions.width * dimensions.height }
    }

    /// libwebrtc's VP8 simulcast table, largest first (`kSimulcastFormatsVP8` in `video/config/simulcast.cc`, WebRTC
    /// M120–M130; the same figures since 2020):
    ///
    /// | size | layers | max | target | min (kbit/s) |
    /// |---|---|---|---|---|
    /// | 1920x1080 | 3 | 5000 | 4000 | 800 |
    /// | 1280x720 | 3 | 2500 | 2500 | 600 |
    /// | 960x540 | 3 | 1200 | 1200 | 350 |
    /// | 640x360 | 2 | 700 | 500 | 150 |
    /// | 480x270 | 2 | 450 | 350 | 150 |
    /// | 320x180 | 1 | 200 | 150 | 30 |
    /// | 0x0 | 1 | 200 | 150 | 30 |
    ///
    /// The last row is libwebrtc's `0x0` row after `GetSimulcastFormats` copies the 320x180 rates into it (the
    /// default, low-resolution interpolation off): sizes below 320x180 get the 320x180 rates.
    public static let table: [Row] = [
        Row(
            dimensions: Dimensions(width: 1920, height: 1080), maxLayers: 3, maxBitsPerSecond: 5_000_000,
            targetBitsPerSecond: 4_000_000, minBitsPerSecond: 800_000),
        Row(
            dimensions: Dimensions(width: 1280, height: 720), maxLayers: 3, maxBitsPerSecond: 2_500_000,
            targetBitsPerSecond: 2_500_000, minBitsPerSecond: 600_000),
        Row(
            dimensions: Dimensions(width: 960, height: 540), maxLayers: 3, maxBitsPerSecond: 1_200_000,
            targetBitsPerSecond: 1_200_000, minBitsPerSecond: 350_000),
        Row(
            dimensions: Dimensions(width: 640, height: 360), maxLayers: 2, maxBitsPerSecond: 700_000,
            targetBitsPerSecond: 500_000, minBitsPerSecond: 150_000),
        Row(
            dimensions: Dimensions(width: 480, height: 270), maxLayers: 2, maxBitsPerSecond: 450_000,
            targetBitsPerSecond: 350_000, minBitsPerSecond: 150_000),
        Row(
            dimensions: Dimensions(width: 320, height: 180), maxLayers: 1, maxBitsPerSecond: 200_000,
            targetBitsPerSecond: 150_000, minBitsPerSecond: 30_000),
        Row(
            dimensions: Dimensions(width: 0, height: 0), maxLayers: 1, maxBitsPerSecond: 200_000,
            targetBitsPerSecond: 150_000, minBitsPerSecond: 30_000),
    ]

    /// The most layers libwebrtc's VP8 simulcast uses.
    public static let maxLayerLimit = 3

    /// The input size the layout was made for.
    public let input: Dimensions
    /// The encodings, lowest resolution first (index = `EncodedFrame.simulcastIndex`); at least one.
    public let streams: [SimulcastStream]

    /// Lays out the simulcast encodings of `input`.
    ///
    /// - Parameters:
    ///   - input: The size of the frames the encoders get (after the video adapter and any CPU-overuse step).
    ///   - maxLayers: The most layers wanted, clamped to 1…3; the input size may allow fewer.
    ///   - temporalLayers: Temporal layers in every layer, clamped to 1…3.
    public init(input: Dimensions, maxLayers: Int, temporalLayers: Int) {
        self.input = input
        let temporalLayers = min(3, max(1, temporalLayers))
        let count = Self.layerCount(input: input, maxLayers: maxLayers)
        let shift = count - 1
        var width = (max(0, input.width) >> shift) << shift
        var height = (max(0, input.height) >> shift) << shift
        var streams: [SimulcastStream] = []
        streams.reserveCapacity(count)
        for index in stride(from: count - 1, through: 0, by: -1) {
            let size = Dimensions(width: width, height: height)
            let row = Self.interpolate(pixels: Self.pixels(size))
            var maxBps = row.maxBitsPerSecond
            var targetBps = row.targetBitsPerSecond
            if index == 0, temporalLayers != 3 {
                // libwebrtc: `rate_factor = GetTemporalRateAllocation(3, 0) / GetTemporalRateAllocation(n, 0)`, all in
                // `float`, then `static_cast<int>(bps * rate_factor)`.
                let factor = Float(0.4) / Float(temporalLayers == 2 ? 0.6 : 1.0)
                maxBps = Self.truncated(Float(maxBps) * factor)
                targetBps = Self.truncated(Float(targetBps) * factor)
            }
            let minBps = row.minBitsPerSecond
            maxBps = max(minBps, maxBps)
            targetBps = max(minBps, targetBps)
            streams.append(
                SimulcastStream(
                    dimensions: size, minKbps: minBps / 1000, targetKbps: targetBps / 1000, maxKbps: maxBps / 1000,
                    temporalLayers: temporalLayers))
            width /= 2
            height /= 2
        }
        self.streams = streams.reversed()
    }

    /// The lowest total bit rate: the lowest layer's min (the allocator always gives it that), in kbit/s.
    public var minKbps: Int { streams.first?.minKbps ?? 0 }

    /// The highest total bit rate the layers can use: every layer but the top at its target, the top at its max
    /// (libwebrtc's `GetTotalMaxBitrate`), in kbit/s.
    public var maxKbps: Int {
        guard let top = streams.last else { return 0 }
        return streams.dropLast().reduce(0) { $0 + $1.targetKbps } + top.maxKbps
    }

    /// ``minKbps`` … ``maxKbps``.
    public var bitrateRange: ClosedRange<Int> { minKbps...max(minKbps, maxKbps) }

    /// The rate a connection pads its sending up to (at most its estimate) so that the estimate can grow to where the
    /// allocator turns every layer on: every layer below the top at its target, plus the top layer's minimum × 1.2
    /// (the allocator's hysteresis), at most the top layer's target; 0 with one layer, which needs no padding to
    /// start (libwebrtc's `CalculateMaxPadBitrateBps` without ALR probing), in kbit/s.
    ///
    /// Without it, a publisher whose top layer is off sends only the lower layers' rate, and an estimate bounded by
    /// 1.5 × the acknowledged rate (GCC's rule) may never reach the top layer's 1.2 × minimum above them.
    public var paddingTargetKbps: Int {
        guard streams.count > 1, let top = streams.last else { return 0 }
        let topStart = min((top.minKbps * 12 + 5) / 10, top.targetKbps)
        return streams.dropLast().reduce(topStart) { $0 + $1.targetKbps }
    }

    /// How many layers an input of `input` is split into when `maxLayers` (clamped to 1…3) are wanted
    /// (libwebrtc's `LimitSimulcastLayerCount` with its default round-up rate 0.1).
    public static func layerCount(input: Dimensions, maxLayers: Int) -> Int {
        let wanted = min(maxLayerLimit, max(1, maxLayers))
        return min(wanted, interpolate(pixels: pixels(input)).maxLayers)
    }

    /// The table's figures at `pixels`, interpolated between the rows around it.
    static func interpolate(pixels: Int) -> Row {
        let rows = table
        guard let index = rows.firstIndex(where: { pixels >= $0.pixels }), index > 0 else { return rows[0] }
        let up = rows[index - 1]
        let down = rows[index]
        // libwebrtc computes the fraction in `float`; each term is a `DataRate * double`, rounded with llround.
        let rate = Float(up.pixels - pixels) / Float(up.pixels - down.pixels)
        let fraction = Double(rate)
        func mix(_ a: Int, _ b: Int) -> Int {
            Int((Double(a) * (1.0 - fraction)).rounded()) + Int((Double(b) * fraction).rounded())
        }
        return Row(
            dimensions: down.dimensions, maxLayers: rate < 0.1 ? up.maxLayers : down.maxLayers,
            maxBitsPerSecond: mix(up.maxBitsPerSecond, down.maxBitsPerSecond),
            targetBitsPerSecond: mix(up.targetBitsPerSecond, down.targetBitsPerSecond),
            minBitsPerSecond: mix(up.minBitsPerSecond, down.minBitsPerSecond))
    }

    /// The pixel count of `size`, with the sides bounded so that the product cannot overflow.
    static func pixels(_ size: Dimensions) -> Int {
        min(max(0, size.width), 1 << 24) * min(max(0, size.height), 1 << 24)
    }

    /// `static_cast<int>` of a non-negative `float`.
    private static func truncated(_ value: Float) -> Int {
        value.isFinite && value > 0 ? Int(min(value, Float(Int32.max))) : 0
    }
}
