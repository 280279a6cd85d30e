/// An 8-bit I420 picture in three tightly packed planes (no row padding), copied out of a frame buffer so that the
/// pooled buffer can go back to its pool: for keeping frames, comparing them, or writing them to a file.
public struct I420Picture: Sendable, Hashable {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// The luma plane, `width × height` bytes.
    public var y: [UInt8]
    /// The U plane, `chromaWidth × chromaHeight` bytes.
    public var u: [UInt8]
    /// The V plane, `chromaWidth × chromaHeight` bytes.
    public var v: [UInt8]

    /// Creates a picture from its planes.
    public init(width: Int, height: Int, y: [UInt8], u: [UInt8], v: [UInt8]) {
        self.width = width
        self.height = height
        self.y = y
        self.u = u
        self.v = v
    }

    /// Copies `buffer` (NV12 or I420) into I420 planes.
    public init(copying buffer: VideoFrameBuffer) {
        width = buffer.width
        height = buffer.height
        (y, u, v) = buffer.packedI420Planes()
    }

    /// Width of the chroma planes: half the width, rounded up.
    public var chromaWidth: Int { (width + 1) / 2 }
    /// Height of the chroma planes: half the height, rounded up.
    public var chromaHeight: Int { (height + 1) / 2 }
    /// Bytes in all three planes.
    public var byteCount: Int { y.count + u.count + v.count }
}
