import Foundation

/// Peak signal-to-noise ratio of two 8-bit NV12 frames, per plane and over all samples.
package struct VividPSNR: Sendable, Hashable {
    /// PSNR of the luma planes in dB (`.infinity` when identical).
    package let luma: Double
    /// PSNR of the interleaved chroma planes in dB (`.infinity` when identical).
    package let chroma: Double
    /// PSNR over every luma and chroma sample in dB (`.infinity` when identical).
    package let combined: Double

    /// Compares two tightly packed NV12 frames of `width`x`height`; nil when either has the wrong size.
    package init?(nv12 a: [UInt8], _ b: [UInt8], width: Int, height: Int) {
        let lumaCount = width * height
        let chromaCount = 2 * ((width + 1) / 2) * ((height + 1) / 2)
        guard width > 0, height > 0, a.count == lumaCount + chromaCount, b.count == a.count else { return nil }
        let lumaError = Self.squaredError(a, b, 0..<lumaCount)
        let chromaError = Self.squaredError(a, b, lumaCount..<a.count)
        luma = Self.psnr(squaredError: lumaError, samples: lumaCount)
        chroma = Self.psnr(squaredError: chromaError, samples: chromaCount)
        combined = Self.psnr(squaredError: lumaError + chromaError, samples: a.count)
    }

    private static func squaredError(_ a: [UInt8], _ b: [UInt8], _ range: Range<Int>) -> Double {
        var sum: UInt64 = 0
        for i in range {
            let d = Int64(a[i]) - Int64(b[i])
            sum &+= UInt64(d * d)
        }
        return Double(sum)
    }

    private static func psnr(squaredError: Double, samples: Int) -> Double {
        guard squaredError > 0 else { return .infinity }
        let mse = squaredError / Double(samples)
        return 10 * log10(255 * 255 / mse)
    }
}
