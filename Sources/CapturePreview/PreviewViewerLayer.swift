/// One viewer's simulcast layer as the page shows it (``PreviewFigures/viewerLayers``).
public struct PreviewViewerLayer: Codable, Sendable, Hashable {
    /// The layer the viewer gets (0 is the lowest resolution), `nil` while it waits for a key frame.
    public var layer: Int?
    /// The layer's width in pixels, 0 while unknown.
    public var width: Int
    /// The layer's height in pixels, 0 while unknown.
    public var height: Int
    /// The viewer's bandwidth estimate, in kbit/s: what picks its layer.
    public var estimateKbps: Int

    /// Creates a viewer's figures.
    public init(layer: Int?, width: Int, height: Int, estimateKbps: Int) {
        self.layer = layer
        self.width = width
        self.height = height
        self.estimateKbps = estimateKbps
    }
}
