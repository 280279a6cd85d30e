import CaptureCore
import Foundation

/// The CLI's use of a copied picture: RGB for PPM and PNG files.
extension I420Picture {
    /// Interleaved 8-bit RGB, BT.601 limited range, chroma upsampled by replication.
    func rgb() -> [UInt8] {
        let chromaWidth = self.chromaWidth
        return [UInt8](unsafeUninitializedCapacity: width * height * 3) { out, initialized in
            var index = 0
            for row in 0..<height {
                let chromaRow = (row / 2) * chromaWidth
                for column in 0..<width {
                    let c = 298 * (Int(y[row * width + column]) - 16) + 128
                    let chroma = chromaRow + column / 2
                    let d = Int(u[chroma]) - 128
                    let e = Int(v[chroma]) - 128
                    out[index] = Self.clamp((c + 409 * e) >> 8)
                    out[index + 1] = Self.clamp((c - 100 * d - 208 * e) >> 8)
                    out[index + 2] = Self.clamp((c + 516 * d) >> 8)
                    index += 3
                }
            }
            initialized = index
        }
    }

    private static func clamp(_ value: Int) -> UInt8 { UInt8(min(max(value, 0), 255)) }
}

/// Squared error between two pictures of the same size, per plane.
struct PictureError: Sendable {
    var lumaSSE: UInt64 = 0
    var chromaSSE: UInt64 = 0
    var lumaSamples = 0
    var chromaSamples = 0

    /// The error between `a` and `b`, or `nil` when their sizes differ.
    init?(_ a: I420Picture, _ b: I420Picture) {
        guard a.width == b.width, a.height == b.height else { return nil }
        lumaSSE = Self.sse(a.y, b.y)
        chromaSSE = Self.sse(a.u, b.u) + Self.sse(a.v, b.v)
        lumaSamples = a.y.count
        chromaSamples = a.u.count + a.v.count
    }

    init() {}

    static func + (lhs: PictureError, rhs: PictureError) -> PictureError {
        var sum = PictureError()
        sum.lumaSSE = lhs.lumaSSE + rhs.lumaSSE
        sum.chromaSSE = lhs.chromaSSE + rhs.chromaSSE
        sum.lumaSamples = lhs.lumaSamples + rhs.lumaSamples
        sum.chromaSamples = lhs.chromaSamples + rhs.chromaSamples
        return sum
    }

    /// PSNR in dB over all three planes (capped at 99 for identical pictures, as libvpx reports).
    var psnr: Double { Self.psnr(sse: lumaSSE + chromaSSE, samples: lumaSamples + chromaSamples) }
    /// PSNR of the luma plane.
    var lumaPSNR: Double { Self.psnr(sse: lumaSSE, samples: lumaSamples) }

    static func psnr(sse: UInt64, samples: Int) -> Double {
        guard samples > 0 else { return 0 }
        return min(99, FrameQuality.psnr(squaredError: sse, samples: samples))
    }

    private static func sse(_ a: [UInt8], _ b: [UInt8]) -> UInt64 {
        FrameQuality.squaredError(a, b, in: 0..<min(a.count, b.count))
    }
}
