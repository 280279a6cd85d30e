/// The clockwise rotation a renderer must apply to show a frame upright (WebRTC's `VideoRotation`).
public enum VideoRotation: Int, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// No rotation.
    case degrees0 = 0
    /// 90 degrees clockwise.
    case degrees90 = 90
    /// 180 degrees.
    case degrees180 = 180
    /// 270 degrees clockwise.
    case degrees270 = 270

    /// Creates a rotation from a number of degrees; any multiple of 90 (negative too) is accepted.
    public init?(degrees: Int) {
        let normalized = ((degrees % 360) + 360) % 360
        self.init(rawValue: normalized)
    }

    /// The rotation in degrees.
    public var degrees: Int { rawValue }

    /// `"90°"`.
    public var description: String { "\(rawValue)°" }

    /// The sum of two rotations.
    public func adding(_ other: VideoRotation) -> VideoRotation {
        VideoRotation(rawValue: (rawValue + other.rawValue) % 360) ?? .degrees0
    }
}

/// The physical orientation of the device that holds the camera (UIKit's `UIDeviceOrientation`).
public enum DeviceOrientation: String, Sendable, Hashable, Codable, CaseIterable {
    /// Upright, home button (or equivalent) at the bottom.
    case portrait
    /// Upside down.
    case portraitUpsideDown
    /// Turned so that the top of the device points left.
    case landscapeLeft
    /// Turned so that the top of the device points right.
    case landscapeRight
    /// Lying flat, screen up.
    case faceUp
    /// Lying flat, screen down.
    case faceDown
    /// Not known.
    case unknown
}

/// Where a camera faces.
public enum CameraPosition: String, Sendable, Hashable, Codable, CaseIterable {
    /// Faces the user.
    case front
    /// Faces away from the user.
    case back
    /// A separate camera, such as a USB webcam.
    case external
    /// Not reported.
    case unspecified
}
