/// The pixel layout of the frames the capturer delivers.
public enum OutputPixelFormat: String, Sendable, Hashable, Codable, CaseIterable {
    /// A Y plane followed by one interleaved UV plane, 4:2:0 (the default, as in WebRTC on Apple platforms).
    case nv12
    /// Three planes Y, U, V, 4:2:0.
    case i420

    /// The V4L2 FourCC with the same layout (`NV12` or `YU12`).
    public var pixelFormat: PixelFormat { self == .nv12 ? .nv12 : .yu12 }
}
