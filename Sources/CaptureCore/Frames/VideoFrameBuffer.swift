/// The geometry of one plane of a frame buffer.
public struct PlaneLayout: Sendable, Hashable {
    /// Byte offset of the plane's first row from the start of the buffer; a multiple of 64.
    public var offset: Int
    /// Bytes from the start of one row to the next; a multiple of 64.
    public var stride: Int
    /// Bytes of pixel data in each row.
    public var rowBytes: Int
    /// Number of rows.
    public var rows: Int

    /// Bytes from the first byte of the plane to the end of its last row's padding.
    public var byteCount: Int { stride * rows }
}

/// The pixels of one frame, NV12 (Y + interleaved UV) or I420 (Y, U, V), each plane 64-byte aligned with its stride.
///
/// Buffers come from a ``FrameBufferPool`` and go back to it when the last frame referring to them is released, so
/// steady-state capture allocates nothing. A buffer's pixels are written only while it is owned by its pool (before
/// it is handed out in a ``VideoFrame``); after that they are read-only, so a frame may be read from any thread.
public final class VideoFrameBuffer: @unchecked Sendable {
    // Why @unchecked Sendable is safe: every stored property is immutable except the pixel memory, and the pixel
    // memory is written only through `package` accessors by the producer that holds the buffer exclusively (the pool
    // hands a buffer out only when its reference count shows no frame refers to it). Once published in a VideoFrame
    // the pixels are only read. The reference count is atomic.

    /// NV12 or I420.
    public let format: OutputPixelFormat
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// The planes: Y and UV for NV12; Y, U and V for I420.
    public let planes: [PlaneLayout]
    /// Total bytes of the allocation.
    public let byteCount: Int

    /// Buffer alignment and stride multiple, as in WebRTC (`kBufferAlignment`).
    public static let alignment = 64

    private let base: UnsafeMutableRawPointer

    /// Allocates a buffer for `width` × `height` pixels in `format`, planes and strides aligned to 64 bytes.
    public init(format: OutputPixelFormat, width: Int, height: Int) {
        precondition(width > 0 && height > 0, "frame dimensions must be positive")
        self.format = format
        self.width = width
        self.height = height
        let chromaWidth = (width + 1) / 2
        let chromaHeight = (height + 1) / 2
        func aligned(_ n: Int) -> Int { (n + Self.alignment - 1) / Self.alignment * Self.alignment }
        var layouts: [PlaneLayout] = []
        var offset = 0
        func add(rowBytes: Int, rows: Int) {
            let plane = PlaneLayout(offset: offset, stride: aligned(rowBytes), rowBytes: rowBytes, rows: rows)
            layouts.append(plane)
            offset = aligned(offset + plane.byteCount)
        }
        add(rowBytes: width, rows: height)
        switch format {
        case .nv12:
            add(rowBytes: chromaWidth * 2, rows: chromaHeight)
        case .i420:
            add(rowBytes: chromaWidth, rows: chromaHeight)
            add(rowBytes: chromaWidth, rows: chromaHeight)
        }
        self.planes = layouts
        self.byteCount = max(offset, Self.alignment)
        self.base = UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: Self.alignment)
        base.initializeMemory(as: UInt8.self, repeating: 0, count: byteCount)
    }

    deinit { base.deallocate() }

    /// The dimensions of the frame.
    public var dimensions: Dimensions { Dimensions(width: width, height: height) }

    /// Calls `body` with the bytes of plane `index` (from its first byte to the end of its last row's padding).
    public func withUnsafeBytes<R>(plane index: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let plane = planes[index]
        return try body(UnsafeRawBufferPointer(start: base + plane.offset, count: plane.byteCount))
    }

    /// Copies plane `index` out row by row without its padding (`rowBytes × rows` bytes).
    public func packedBytes(plane index: Int) -> [UInt8] {
        let plane = planes[index]
        var out = [UInt8](repeating: 0, count: plane.rowBytes * plane.rows)
        out.withUnsafeMutableBytes { dst in
            for row in 0..<plane.rows {
                let src = UnsafeRawPointer(base + plane.offset + row * plane.stride)
                (dst.baseAddress! + row * plane.rowBytes).copyMemory(from: src, byteCount: plane.rowBytes)
            }
        }
        return out
    }

    /// Copies the picture out as three I420 planes without padding, whatever the buffer's layout: Y (`width × height`
    /// bytes), U and V (`⌈width/2⌉ × ⌈height/2⌉` bytes each; an NV12 buffer's interleaved UV plane is split).
    public func packedI420Planes() -> (y: [UInt8], u: [UInt8], v: [UInt8]) {
        let y = packedBytes(plane: 0)
        switch format {
        case .i420:
            return (y, packedBytes(plane: 1), packedBytes(plane: 2))
        case .nv12:
            let uv = packedBytes(plane: 1)
            let count = uv.count / 2
            return uv.withUnsafeBufferPointer { uv in
                let u = [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
                    for index in 0..<count { out[index] = uv[2 * index] }
                    initialized = count
                }
                let v = [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
                    for index in 0..<count { out[index] = uv[2 * index + 1] }
                    initialized = count
                }
                return (y, u, v)
            }
        }
    }

    /// Copies the picture out as packed I420 bytes, whatever the buffer's layout: the Y, U and V planes of
    /// ``packedI420Planes()`` one after the other, without padding.
    public func packedI420() -> [UInt8] {
        let planes = packedI420Planes()
        return planes.y + planes.u + planes.v
    }

    /// Writable pointer to the first byte of plane `index`. Only for the producer that owns the buffer.
    package func mutablePlane(_ index: Int) -> UnsafeMutablePointer<UInt8> {
        (base + planes[index].offset).assumingMemoryBound(to: UInt8.self)
    }

    /// Read-only pointer to the first byte of plane `index`.
    package func plane(_ index: Int) -> UnsafePointer<UInt8> {
        UnsafePointer((base + planes[index].offset).assumingMemoryBound(to: UInt8.self))
    }

    /// Stride of plane `index`.
    package func stride(_ index: Int) -> Int { planes[index].stride }
}

/// A pool of reusable frame buffers of one size and layout.
///
/// ``take()`` returns a buffer that no frame refers to any more, allocating only while the pool is still filling up
/// (at most `capacity` buffers). When every buffer is still held by consumers it returns `nil`, and the producer drops
/// the frame and counts it, rather than letting memory grow without bound.
public final class FrameBufferPool: Sendable {
    /// Layout of the pooled buffers.
    public let format: OutputPixelFormat
    /// Dimensions of the pooled buffers.
    public let dimensions: Dimensions
    /// The largest number of buffers the pool will hold.
    public let capacity: Int

    private let buffers: Locked<[VideoFrameBuffer]>

    /// Creates an empty pool.
    public init(format: OutputPixelFormat, dimensions: Dimensions, capacity: Int = 8) {
        self.format = format
        self.dimensions = dimensions
        self.capacity = max(1, capacity)
        self.buffers = Locked([])
    }

    /// A buffer no frame refers to, or `nil` when all `capacity` buffers are in use.
    public func take() -> VideoFrameBuffer? {
        buffers.withLock { buffers in
            for index in buffers.indices where isKnownUniquelyReferenced(&buffers[index]) {
                return buffers[index]
            }
            guard buffers.count < capacity else { return nil }
            let buffer = VideoFrameBuffer(format: format, width: dimensions.width, height: dimensions.height)
            buffers.append(buffer)
            return buffer
        }
    }

    /// How many buffers the pool has allocated so far.
    public var allocatedCount: Int { buffers.withLock { $0.count } }
}
