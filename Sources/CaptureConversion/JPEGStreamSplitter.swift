/// Finds the JPEG images in a stream of concatenated JPEG frames (an MJPEG file as `ffmpeg -f mjpeg` writes it, or
/// a dump of a webcam's MJPG buffers), fed in chunks of any size.
///
/// It walks the marker segments rather than searching for the end marker, so an `FF D9` inside a segment (an
/// embedded thumbnail) does not end a frame; in entropy-coded data it skips stuffed `FF 00` and restart markers.
/// A frame cut short by the next start-of-image marker, or whose segment structure breaks, is still reported (its
/// decode then fails and the camera counts a drop); bytes outside any frame are skipped until the next `FF D8`.
package struct JPEGStreamSplitter {
    /// One image in the stream: where it starts and how many bytes it has.
    package struct Frame: Sendable, Hashable {
        /// Offset of its `FF D8` in the stream.
        package var offset: Int
        /// Bytes up to and including its `FF D9` (or up to where it broke off).
        package var length: Int
        /// Whether it ended with an end-of-image marker and a well-formed segment structure.
        package var complete: Bool
    }

    private enum State {
        /// Outside a frame, looking for `FF D8`.
        case seeking(sawFF: Bool)
        /// Between segments: expecting `FF` then a marker code.
        case marker(sawFF: Bool)
        /// Reading a segment's two length bytes.
        case length(marker: UInt8, high: UInt8?)
        /// Skipping a segment's remaining bytes.
        case skip(remaining: Int, thenEntropy: Bool)
        /// In entropy-coded data after start-of-scan.
        case entropy(sawFF: Bool)
    }

    private var state = State.seeking(sawFF: false)
    private var frameStart = 0
    private var position = 0

    /// A splitter at the start of a stream.
    package init() {}

    /// Feeds the next bytes of the stream; calls `found` for each frame that ends within them.
    package mutating func feed(_ bytes: UnsafeRawBufferPointer, found: (Frame) -> Void) {
        for byte in bytes {
            step(byte, found: found)
            position += 1
        }
    }

    /// Ends the stream: a frame still open is reported as incomplete.
    package mutating func finish(found: (Frame) -> Void) {
        if case .seeking = state { return }
        found(Frame(offset: frameStart, length: position - frameStart, complete: false))
        state = .seeking(sawFF: false)
    }

    private mutating func step(_ byte: UInt8, found: (Frame) -> Void) {
        switch state {
        case .seeking(let sawFF):
            if sawFF && byte == 0xD8 {
                frameStart = position - 1
                state = .marker(sawFF: false)
            } else {
                state = .seeking(sawFF: byte == 0xFF)
            }
        case .marker(let sawFF):
            if !sawFF {
                if byte == 0xFF {
                    state = .marker(sawFF: true)
                } else {
                    broken(found: found)
                }
            } else {
                self.marker(byte, found: found)
            }
        case .length(let marker, let high):
            guard let high else {
                state = .length(marker: marker, high: byte)
                return
            }
            let length = Int(high) << 8 | Int(byte)
            guard length >= 2 else {
                broken(found: found)
                return
            }
            state =
                length == 2
                ? (marker == 0xDA ? .entropy(sawFF: false) : .marker(sawFF: false))
                : .skip(remaining: length - 2, thenEntropy: marker == 0xDA)
        case .skip(let remaining, let thenEntropy):
            if remaining > 1 {
                state = .skip(remaining: remaining - 1, thenEntropy: thenEntropy)
            } else {
                state = thenEntropy ? .entropy(sawFF: false) : .marker(sawFF: false)
            }
        case .entropy(let sawFF):
            if !sawFF {
                state = .entropy(sawFF: byte == 0xFF)
            } else if byte == 0x00 || (0xD0...0xD7).contains(byte) {
                state = .entropy(sawFF: false)
            } else if byte == 0xFF {
                state = .entropy(sawFF: true)
            } else {
                self.marker(byte, found: found)
            }
        }
    }

    /// Handles the marker code after an `FF`.
    private mutating func marker(_ code: UInt8, found: (Frame) -> Void) {
        switch code {
        case 0xFF:
            state = .marker(sawFF: true)  // fill byte
        case 0xD9:
            found(Frame(offset: frameStart, length: position + 1 - frameStart, complete: true))
            state = .seeking(sawFF: false)
        case 0xD8:
            // A new image before this one ended: report the cut-off one, start the next.
            found(Frame(offset: frameStart, length: position - 1 - frameStart, complete: false))
            frameStart = position - 1
            state = .marker(sawFF: false)
        case 0x00:
            broken(found: found)
        case 0x01, 0xD0...0xD7:
            state = .marker(sawFF: false)
        default:
            state = .length(marker: code, high: nil)
        }
    }

    /// The segment structure broke: report what there is and look for the next image.
    private mutating func broken(found: (Frame) -> Void) {
        found(Frame(offset: frameStart, length: position + 1 - frameStart, complete: false))
        state = .seeking(sawFF: false)
    }
}
