@testable import CaptureConversion
import Testing

/// The MJPEG stream splitter on hand-made marker sequences.
@Suite("Replay camera: JPEG stream splitter")
struct ReplaySplitterTests {
    /// A minimal JPEG-shaped image: SOI, an APP1 segment holding `appPayload`, SOS, entropy bytes, EOI.
    private static func image(appPayload: [UInt8] = [1, 2, 3], entropy: [UInt8] = [0x12, 0xFF, 0x00, 0x34]) -> [UInt8] {
        let app = [0xFF, 0xE1, UInt8(0), UInt8(appPayload.count + 2)] + appPayload
        let sos: [UInt8] = [0xFF, 0xDA, 0x00, 0x04, 0x01, 0x02]
        return [0xFF, 0xD8] + app + sos + entropy + [0xFF, 0xD9]
    }

    private static func split(_ stream: [UInt8], chunk: Int) -> [JPEGStreamSplitter.Frame] {
        var splitter = JPEGStreamSplitter()
        var frames: [JPEGStreamSplitter.Frame] = []
        var start = 0
        while start < stream.count {
            let end = min(stream.count, start + chunk)
            stream[start..<end].withUnsafeBytes { splitter.feed($0) { frames.append($0) } }
            start = end
        }
        splitter.finish { frames.append($0) }
        return frames
    }

    @Test("images are found whatever the chunk size, with an EOI inside a segment and RST/stuffing in the scan")
    func splits() {
        let first = Self.image(appPayload: [0xFF, 0xD9, 0xFF, 0xD8])  // a thumbnail's markers inside APP1
        let second = Self.image(entropy: [0xFF, 0xD0, 0x55, 0xFF, 0x00, 0xFF, 0xFF, 0xD3, 0x66])
        let stream = [0x00, 0x11] + first + second
        for chunk in [1, 3, 7, stream.count] {
            let frames = Self.split(stream, chunk: chunk)
            #expect(
                frames == [
                    .init(offset: 2, length: first.count, complete: true),
                    .init(offset: 2 + first.count, length: second.count, complete: true),
                ], "chunk \(chunk)")
        }
    }

    @Test("an image cut off in its scan data is reported incomplete, the next one still found; a trailing part too")
    func truncated() {
        let whole = Self.image()
        let cut = Array(whole.prefix(17))  // SOI, APP1, SOS, two bytes of scan data
        let frames = Self.split(cut + whole + cut, chunk: 5)
        #expect(frames.map(\.complete) == [false, true, false])
        #expect(frames.map(\.offset) == [0, 17, 17 + whole.count])
    }
}
