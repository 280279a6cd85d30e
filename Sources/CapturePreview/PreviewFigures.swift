/// The stream's figures as the preview page shows them, served as JSON by `GET /figures` (and `/stats.json`).
///
/// Keys are the property names (`width`, `height`, `fps`, `bitrateKbps`, `rotation`, `viewers`, `rttMs`,
/// `viewerLayers`); `rttMs` is absent until a viewer has reported a round-trip time, `viewerLayers` without simulcast.
public struct PreviewFigures: Codable, Sendable, Hashable {
    /// The encoded width in pixels (after rotation), 0 before the first frame.
    public var width: Int
    /// The encoded height in pixels (after rotation), 0 before the first frame.
    public var height: Int
    /// Frames per second sent, over the last second or so.
    public var fps: Double
    /// Video bit rate sent, in kbit/s.
    public var bitrateKbps: Double
    /// The rotation applied to the camera's frames before encoding, in degrees clockwise (0, 90, 180, 270).
    public var rotation: Int
    /// Viewers currently connected.
    public var viewers: Int
    /// The latest round-trip time to a viewer in milliseconds (RTCP or STUN), `nil` while unknown.
    public var rttMs: Double?
    /// With simulcast, each connected viewer's layer, in the order they joined; `nil` without simulcast.
    public var viewerLayers: [PreviewViewerLayer]?

    /// Figures with every field given; `rttMs` defaults to unknown, `viewerLayers` to none (no simulcast).
    public init(
        width: Int = 0, height: Int = 0, fps: Double = 0, bitrateKbps: Double = 0, rotation: Int = 0,
        viewers: Int = 0, rttMs: Double? = nil, viewerLayers: [PreviewViewerLayer]? = nil
    ) {
        self.width = width
        self.height = height
        self.fps = fps
        self.bitrateKbps = bitrateKbps
        self.rotation = rotation
        self.viewers = viewers
        self.rttMs = rttMs
        self.viewerLayers = viewerLayers
    }
}
