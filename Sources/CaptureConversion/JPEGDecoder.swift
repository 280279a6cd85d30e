internal import CaptureCore
internal import CTurboJPEG
internal import CYUV

/// Decodes one stream's MJPEG/JPEG frames with TurboJPEG (libjpeg-turbo), keeping its decompressor and scratch memory
/// from frame to frame.
///
/// Pass one decoder per stream to
/// ``FrameConverter/convert(_:pixelFormat:width:height:bytesPerLine:into:jpegDecoder:)`` (the V4L2 session and the
/// replay camera each own one): in steady state the Swift side then allocates nothing per frame, and TurboJPEG only
/// libjpeg's per-image memory, freed at the end of each image. A conversion without a decoder makes a temporary one.
///
/// Each frame's header is read first (`tjDecompressHeader3`): its size must be the stream's. 4:2:0 then decodes
/// straight into the destination's planes (`tjDecompressToYUVPlanes`; for NV12, U and V go into the two halves of
/// each UV row and are interleaved in place). 4:2:2 and 4:4:4 decode luma into the destination and chroma into
/// scratch planes, which libyuv brings to 4:2:0 (`InterpolatePlane` averages 4:2:2's row pairs; `HalfMergeUVPlane`
/// averages 4:4:4's 2x2 blocks, as `I444ToNV12` does). Greyscale decodes luma and writes neutral chroma. 4:4:0,
/// 4:1:1 and RGB JPEGs take a generic path: TurboJPEG decodes to BGRX scratch pixels and libyuv's `ARGBToJ420`
/// converts them (full range, as JPEG is). CMYK and YCCK frames are refused. Odd sizes work on every path (an odd
/// 4:2:0 height decodes its luma into scratch: TurboJPEG writes an even number of luma rows).
///
/// Bad input is a `CaptureError` with code `conversionFailed`, never a crash: TurboJPEG returns libjpeg's errors
/// through `setjmp`/`longjmp`. As libyuv (and so Chromium and WebRTC) does, a frame must hold an EOI marker: a
/// truncated frame is refused before decoding. libjpeg's warnings do not refuse a frame: UVC webcams commonly send
/// frames that warn ("N extraneous bytes before marker 0xd9") and look right, and refusing them would drop every
/// frame of such a camera; corrupt entropy data then decodes with artefacts, as it did through libyuv. Progressive
/// JPEGs are limited to 500 scans (`TJFLAG_LIMITSCANS`). The decompressor is discarded after a failed header read or
/// a fatal error (TurboJPEG 2.1's instance stays stuck after a failed header read) and made again for the next frame.
/// The fast integer DCT (`TJFLAG_FASTDCT`, libjpeg's `JDCT_IFAST`) is used, as libyuv and GStreamer's `jpegdec` do:
/// the output is libyuv's to the bit, 8 % faster than the accurate DCT, and at most 4 levels away from it.
///
/// Not thread-safe: decode from one thread at a time (a decoder may move between threads between frames).
public final class JPEGDecoder {
    /// The decompressor: made on the first frame (a decoder that never sees a JPEG costs nothing), discarded after a
    /// failure that may leave it unusable.
    private var handle: tjhandle?
    /// Chroma planes (4:2:2, 4:4:4), luma of an odd 4:2:0 height, or BGRX pixels (the generic path): grows to the
    /// largest need, then is reused.
    private var scratch: UnsafeMutablePointer<UInt8>?
    private var scratchCapacity = 0

    /// TurboJPEG flags for every frame: the fast DCT, limit progressive scans.
    private static let flags = TJFLAG_FASTDCT | TJFLAG_LIMITSCANS

    /// Creates a decoder; TurboJPEG's decompressor is made on the first frame.
    public init() {}

    deinit {
        if let handle { tjDestroy(handle) }
        scratch?.deallocate()
    }

    /// Decodes `jpeg` into `dst`, whose size must be the JPEG's (`width` × `height`).
    func decode(
        _ jpeg: UnsafeBufferPointer<UInt8>, width: Int, height: Int, into dst: VideoFrameBuffer
    ) throws(CaptureError) {
        guard let base = jpeg.baseAddress, jpeg.count >= 4, base[0] == 0xFF, base[1] == 0xD8 else {
            throw CaptureError(.conversionFailed, "not a JPEG frame (no SOI marker)")
        }
        guard Self.hasEndOfImage(jpeg) else {
            throw CaptureError(.conversionFailed, "truncated JPEG frame of \(jpeg.count) bytes (no EOI marker)")
        }
        let handle = try decompressor()
        var jpegWidth: Int32 = 0
        var jpegHeight: Int32 = 0
        var sampling: Int32 = -1
        var colorspace: Int32 = -1
        let header = tjDecompressHeader3(
            handle, base, UInt(jpeg.count), &jpegWidth, &jpegHeight, &sampling, &colorspace)
        // A frame that ends inside its header reads as a tables-only JPEG: success with no size.
        guard header == 0, jpegWidth > 0, jpegHeight > 0 else {
            var message = "corrupt or truncated JPEG frame of \(jpeg.count) bytes"
            if header != 0 {
                message += " (\(Self.reason(handle)))"
                discardDecompressor()
            }
            throw CaptureError(.conversionFailed, message)
        }
        guard Int(jpegWidth) == width, Int(jpegHeight) == height else {
            throw CaptureError(
                .conversionFailed, "JPEG frame is \(jpegWidth)x\(jpegHeight), the stream is \(width)x\(height)")
        }
        switch (TJCS(UInt32(bitPattern: colorspace)), TJSAMP(UInt32(bitPattern: sampling))) {
        case (TJCS_GRAY, _):
            try decodePlanes(handle, jpeg, TJSAMP_GRAY, width: width, height: height, into: dst)
        case (TJCS_YCbCr, TJSAMP_420):
            try decodePlanes(handle, jpeg, TJSAMP_420, width: width, height: height, into: dst)
        case (TJCS_YCbCr, TJSAMP_422):
            try decodePlanes(handle, jpeg, TJSAMP_422, width: width, height: height, into: dst)
        case (TJCS_YCbCr, TJSAMP_444):
            try decodePlanes(handle, jpeg, TJSAMP_444, width: width, height: height, into: dst)
        case (TJCS_YCbCr, _), (TJCS_RGB, _):
            try decodeRGB(handle, jpeg, width: width, height: height, into: dst)
        default:
            throw CaptureError(.conversionFailed, "cannot convert CMYK or YCCK JPEG frames")
        }
    }

    /// Decodes a 4:2:0, 4:2:2, 4:4:4 or greyscale frame with `tjDecompressToYUVPlanes`, into the destination's planes
    /// where TurboJPEG's planes fit them, else into scratch planes, then brings them to the destination:
    ///
    /// - luma: TurboJPEG writes it padded to whole chroma samples (an even width and height for 4:2:0). An odd width
    ///   fits in the destination's row padding; an odd 4:2:0 height does not (the extra row would overwrite the next
    ///   plane), so that luma is decoded into scratch and copied (`CopyPlane`).
    /// - 4:2:0 chroma: straight into the destination (an NV12 destination's U and V into the two halves of each UV
    ///   row, interleaved afterwards, see `PlanarTarget`).
    /// - 4:2:2 chroma: each pair of rows averaged (`InterpolatePlane`), the last row of an odd height copied.
    /// - 4:4:4 chroma: each 2x2 block averaged by `HalfMergeUVPlane` (what `I444ToNV12` does): into an NV12
    ///   destination's UV plane, or into scratch and split into an I420 destination's U and V planes.
    /// - greyscale: neutral chroma (128).
    private func decodePlanes(
        _ handle: tjhandle, _ jpeg: UnsafeBufferPointer<UInt8>, _ subsampling: TJSAMP, width: Int, height: Int,
        into dst: VideoFrameBuffer
    ) throws(CaptureError) {
        let code = Int32(subsampling.rawValue)
        let lumaWidth = Int(tjPlaneWidth(0, Int32(width), code))
        let lumaHeight = Int(tjPlaneHeight(0, Int32(height), code))
        let planeWidth = subsampling == TJSAMP_GRAY ? 0 : Int(tjPlaneWidth(1, Int32(width), code))
        let planeHeight = subsampling == TJSAMP_GRAY ? 0 : Int(tjPlaneHeight(1, Int32(height), code))
        let chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2
        let target = PlanarTarget(dst)
        let lumaDirect = lumaHeight == height && lumaWidth <= Int(target.yStride)
        let chromaDirect = subsampling == TJSAMP_420 || subsampling == TJSAMP_GRAY
        // Scratch: luma that does not fit, chroma planes that need a conversion, 4:4:4's merged UV for I420.
        let lumaStride = Self.aligned(lumaWidth), planeStride = Self.aligned(planeWidth)
        let mergedStride = Self.aligned(2 * chromaWidth)
        let lumaBytes = lumaDirect ? 0 : lumaStride * lumaHeight
        let planeBytes = chromaDirect ? 0 : planeStride * planeHeight
        let mergedBytes = subsampling == TJSAMP_444 && dst.format == .i420 ? mergedStride * chromaHeight : 0
        let memory = scratch(bytes: lumaBytes + 2 * planeBytes + mergedBytes)
        let (u, v, merged) = (memory + lumaBytes, memory + lumaBytes + planeBytes, memory + lumaBytes + 2 * planeBytes)

        let luma = lumaDirect ? (target.y, target.yStride) : (memory, Int32(lumaStride))
        let chroma: (UnsafeMutablePointer<UInt8>?, Int32, UnsafeMutablePointer<UInt8>?, Int32) =
            switch subsampling {
            case TJSAMP_GRAY: (nil, 0, nil, 0)
            case TJSAMP_420: (target.u, target.uStride, target.v, target.vStride)
            default: (u, Int32(planeStride), v, Int32(planeStride))
            }
        try decompress(
            handle, jpeg, width: width, height: height, planes: (luma.0, chroma.0, chroma.2),
            strides: (luma.1, chroma.1, chroma.3))
        if !lumaDirect {
            CopyPlane(memory, Int32(lumaStride), target.y, target.yStride, Int32(width), Int32(height))
        }
        switch subsampling {
        case TJSAMP_420:
            target.finish()
        case TJSAMP_422:
            Self.halveRows(u, stride: planeStride, width: planeWidth, height: height, into: target.u, target.uStride)
            Self.halveRows(v, stride: planeStride, width: planeWidth, height: height, into: target.v, target.vStride)
            target.finish()
        case TJSAMP_444:
            switch dst.format {
            case .nv12:
                HalfMergeUVPlane(
                    u, Int32(planeStride), v, Int32(planeStride), target.u, target.uStride, Int32(planeWidth),
                    Int32(planeHeight))
            case .i420:
                HalfMergeUVPlane(
                    u, Int32(planeStride), v, Int32(planeStride), merged, Int32(mergedStride), Int32(planeWidth),
                    Int32(planeHeight))
                SplitUVPlane(
                    merged, Int32(mergedStride), target.u, target.uStride, target.v, target.vStride,
                    Int32(chromaWidth), Int32(chromaHeight))
            }
        default:  // Greyscale.
            for plane in 1..<dst.planes.count {
                SetPlane(
                    dst.mutablePlane(plane), Int32(truncatingIfNeeded: dst.stride(plane)),
                    Int32(dst.format == .nv12 ? 2 * chromaWidth : chromaWidth), Int32(chromaHeight), 128)
            }
        }
    }

    /// Averages each pair of `plane`'s rows into a row of `destination` (libyuv's `InterpolatePlane` at one half,
    /// rounding up); the last row of an odd `height` is copied.
    private static func halveRows(
        _ plane: UnsafeMutablePointer<UInt8>, stride: Int, width: Int, height: Int,
        into destination: UnsafeMutablePointer<UInt8>, _ destinationStride: Int32
    ) {
        let pairs = height / 2
        if pairs > 0 {
            InterpolatePlane(
                plane, Int32(2 * stride), plane + stride, Int32(2 * stride), destination, destinationStride,
                Int32(width), Int32(pairs), 128)
        }
        if height % 2 == 1 {
            CopyPlane(
                plane + (height - 1) * stride, Int32(stride), destination + pairs * Int(destinationStride),
                destinationStride, Int32(width), 1)
        }
    }

    /// The generic path (4:4:0, 4:1:1, RGB JPEGs): TurboJPEG decodes to BGRX pixels (libyuv's "ARGB") in scratch,
    /// libyuv's `ARGBToJ420` converts them to full-range 4:2:0.
    private func decodeRGB(
        _ handle: tjhandle, _ jpeg: UnsafeBufferPointer<UInt8>, width: Int, height: Int, into dst: VideoFrameBuffer
    ) throws(CaptureError) {
        let pitch = Self.aligned(4 * width)
        let pixels = scratch(bytes: pitch * height)
        let result = tjDecompress2(
            handle, jpeg.baseAddress, UInt(jpeg.count), pixels, Int32(width), Int32(pitch), Int32(height),
            Int32(TJPF_BGRX.rawValue), Self.flags)
        try check(result, handle, width: width, height: height)
        let converted = PlanarTarget.write(into: dst) { t in
            ARGBToJ420(pixels, Int32(pitch), t.y, t.yStride, t.u, t.uStride, t.v, t.vStride, t.width, t.height)
        }
        guard converted == 0 else {
            throw CaptureError(.conversionFailed, "libyuv failed to convert the decoded JPEG frame (\(converted))")
        }
    }

    /// `tjDecompressToYUVPlanes` into `planes` (U and V `nil` for greyscale).
    private func decompress(
        _ handle: tjhandle, _ jpeg: UnsafeBufferPointer<UInt8>, width: Int, height: Int,
        planes: (UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?),
        strides: (Int32, Int32, Int32)
    ) throws(CaptureError) {
        // TurboJPEG takes C arrays of three plane pointers and three strides: homogeneous tuples on the stack.
        var planes = planes
        var strides = strides
        let result = withUnsafeMutablePointer(to: &planes) { planes in
            withUnsafeMutablePointer(to: &strides) { strides in
                planes.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 3) { planes in
                    strides.withMemoryRebound(to: Int32.self, capacity: 3) { strides in
                        tjDecompressToYUVPlanes(
                            handle, jpeg.baseAddress, UInt(jpeg.count), planes, Int32(width), strides, Int32(height),
                            Self.flags)
                    }
                }
            }
        }
        try check(result, handle, width: width, height: height)
    }

    /// Throws for a failed TurboJPEG call with TurboJPEG's reason, and discards the decompressor. A warning (-1 with
    /// `TJERR_WARNING`: the image was decoded to its end) is not a failure.
    private func check(_ result: Int32, _ handle: tjhandle, width: Int, height: Int) throws(CaptureError) {
        guard result != 0, tjGetErrorCode(handle) != Int32(TJERR_WARNING.rawValue) else { return }
        let reason = Self.reason(handle)
        discardDecompressor()
        throw CaptureError(.conversionFailed, "could not decode the \(width)x\(height) JPEG frame: \(reason)")
    }

    /// Whether `jpeg` holds an EOI marker (FF D9), looked for in its last 1,024 bytes first (a camera may pad a frame
    /// after it), then in the rest. Entropy-coded data cannot hold FF D9 (an FF there is followed by 00 or a restart
    /// marker), so a frame cut short has none. libyuv's `ValidateJpeg` makes the same check.
    private static func hasEndOfImage(_ jpeg: UnsafeBufferPointer<UInt8>) -> Bool {
        func scan(_ range: Range<Int>) -> Bool {
            var index = range.lowerBound
            while index + 1 < range.upperBound {
                if jpeg[index] == 0xFF, jpeg[index + 1] == 0xD9 { return true }
                index += 1
            }
            return false
        }
        let tail = max(2, jpeg.count - 1024)
        return scan(tail..<jpeg.count) || scan(2..<min(jpeg.count, tail + 1))
    }

    /// The decompressor, made if there is none.
    private func decompressor() throws(CaptureError) -> tjhandle {
        if let handle { return handle }
        guard let created = tjInitDecompress() else {
            throw CaptureError(
                .conversionFailed, "TurboJPEG could not create a decompressor (\(Self.reason(nil)))")
        }
        handle = created
        return created
    }

    /// Destroys the decompressor; the next frame makes a new one.
    private func discardDecompressor() {
        if let handle { tjDestroy(handle) }
        handle = nil
    }

    /// TurboJPEG's message for the last failed call on `handle` (per thread when `handle` is `nil`).
    private static func reason(_ handle: tjhandle?) -> String {
        guard let text = tjGetErrorStr2(handle) else { return "no reason given" }
        return String(cString: text)
    }

    /// At least `bytes` bytes of scratch memory, 64-byte aligned.
    private func scratch(bytes: Int) -> UnsafeMutablePointer<UInt8> {
        if let scratch, scratchCapacity >= bytes { return scratch }
        scratch?.deallocate()
        let memory = UnsafeMutableRawPointer.allocate(byteCount: max(bytes, 1), alignment: 64)
            .bindMemory(to: UInt8.self, capacity: max(bytes, 1))
        scratch = memory
        scratchCapacity = bytes
        return memory
    }

    /// `bytes` rounded up to a multiple of 64 (scratch row strides).
    private static func aligned(_ bytes: Int) -> Int { (bytes + 63) & ~63 }
}
