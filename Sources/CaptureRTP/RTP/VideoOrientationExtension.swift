public import CaptureCore

/// The CVO header extension (`urn:3gpp:video-orientation`, 3GPP TS 26.114 §7.4.5): one byte `0000CFR1R0`, where
/// R1R0 is the clockwise rotation in quarter turns.
public enum VideoOrientationExtension {
    /// The extension's URI, as negotiated in SDP `a=extmap`.
    public static let uri = "urn:3gpp:video-orientation"

    /// The extension byte for `rotation` (camera facing and flip bits clear).
    public static func byte(for rotation: VideoRotation) -> UInt8 {
        UInt8(rotation.degrees / 90) & 0x03
    }

    /// The rotation an extension byte carries (only R1R0 are read).
    public static func rotation(from byte: UInt8) -> VideoRotation {
        VideoRotation(degrees: Int(byte & 0x03) * 90) ?? .degrees0
    }
}
