import Foundation

/// Peak signal-to-noise ratio (PSNR) of 8-bit pictures: how close a decoded or converted picture is to its source.
///
/// PSNR = 10 · log10(255² / MSE) dB, MSE being the mean squared difference per sample. Identical inputs give `+∞`;
/// callers that report a capped value (libvpx reports 99 dB) apply the cap themselves. Callers choose their own
/// aggregation: summing ``squaredError(_:_:in:)`` over frames gives the overall PSNR of a sequence, averaging
/// ``psnr(_:_:)`` gives the mean per-frame PSNR.
public enum FrameQuality {
    /// PSNR of one picture, per plane and overall.
    public struct PlanarPSNR: Sendable, Hashable {
        /// PSNR of the luma (Y) samples in dB.
        public var luma: Double
        /// PSNR of the chroma samples (U and V, planar or interleaved) in dB.
        public var chroma: Double
        /// PSNR over every sample in dB.
        public var combined: Double
    }

    /// The sum of squared differences between `a` and `b` over the indices `range` (which both must contain).
    public static func squaredError(_ a: [UInt8], _ b: [UInt8], in range: Range<Int>) -> UInt64 {
        precondition(range.lowerBound >= 0 && range.upperBound <= min(a.count, b.count), "range outside the inputs")
        return a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                var sum: UInt64 = 0
                for index in range {
                    let difference = Int(a[index]) - Int(b[index])
                    sum &+= UInt64(difference * difference)
                }
                return sum
            }
        }
    }

    /// PSNR in dB for a sum of squared differences over `samples` samples: `+∞` when the error is 0, NaN when
    /// `samples` is not positive.
    public static func psnr(squaredError: UInt64, samples: Int) -> Double {
        guard samples > 0 else { return .nan }
        guard squaredError > 0 else { return .infinity }
        let mse = Double(squaredError) / Double(samples)
        return 10 * log10(255 * 255 / mse)
    }

    /// PSNR in dB of two equally long 8-bit sample arrays (`+∞` when identical, NaN when empty or of different
    /// lengths).
    public static func psnr(_ a: [UInt8], _ b: [UInt8]) -> Double {
        guard a.count == b.count else { return .nan }
        return psnr(squaredError: squaredError(a, b, in: 0..<a.count), samples: a.count)
    }

    /// PSNR of two packed pictures whose first `lumaCount` bytes are luma and the rest chroma (packed I420, or NV12
    /// with its interleaved UV plane), per plane and overall; `nil` when their lengths differ or either part is empty.
    public static func psnr(packed a: [UInt8], _ b: [UInt8], lumaCount: Int) -> PlanarPSNR? {
        guard a.count == b.count, lumaCount > 0, lumaCount < a.count else { return nil }
        let luma = squaredError(a, b, in: 0..<lumaCount)
        let chroma = squaredError(a, b, in: lumaCount..<a.count)
        return PlanarPSNR(
            luma: psnr(squaredError: luma, samples: lumaCount),
            chroma: psnr(squaredError: chroma, samples: a.count - lumaCount),
            combined: psnr(squaredError: luma + chroma, samples: a.count))
    }
}
