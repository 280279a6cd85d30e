import CaptureCore
import CaptureTestSupport
import Foundation
import Testing

@testable import CapturePreview

/// Node.js for the page's stamp script, when installed.
let previewNode = ["node", "nodejs"].lazy.compactMap(ExternalProcess.which).first

/// The page's stamp script (`stamp.js`, inlined as `<script id="stamp">`): its functions (no DOM) run in Node.js
/// against what `FrameStamp` draws.
@Suite(.tags(.interop), .selectedByTags, .enabled(if: previewNode != nil, "needs node"))
struct PreviewStampScriptTests {
    struct Decoded: Decodable {
        struct Geometry: Decodable {
            var rowHeight: Int
            var cellWidth: Int
        }
        struct Stamp: Decodable {
            var frame: UInt32
            var time: UInt32
        }
        var geometry: Geometry
        var stamp: Stamp
        var corrupted: Stamp?
    }

    struct Tracked: Decodable {
        struct Stamps: Decodable {
            var frames: Int
            var lastFrame: Int
            var outOfOrder: Int
            var repeated: Int
            var skipped: Int
            var invalid: Int
        }
        var stamps: Stamps
        var latencies: [Int?]
        var wrapped: [Double]
    }

    /// The text of the page's stamp script: its resource file, `stamp.js`, as the module's bundle holds it.
    static func stampScript() throws -> String {
        try PreviewPage.stampScript()
    }

    /// Runs the stamp script followed by `test` in Node.js with `arguments`; returns its standard output.
    static func node(_ test: String, arguments: [String] = []) async throws -> Data {
        let node = try #require(previewNode)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("preview-stamp-\(UUID()).js")
        try Data((try stampScript() + test).utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try await ExternalProcess.run(node, [file.path] + arguments)
        try #require(result.status == 0, "node failed: \(result.stderrText)")
        return result.stdout
    }

    @Test(arguments: [(640, 480), (1280, 720), (320, 240), (1920, 1080), (176, 144)])
    func decodesWhatFrameStampDraws(width: Int, height: Int) async throws {
        let stamp = FrameStamp(frameNumber: 0xDEAD_BEEF, captureTimeMs: 0x8000_0001)
        var luma = [UInt8](repeating: 90, count: width * height)
        luma.withUnsafeMutableBufferPointer { plane in
            guard let base = plane.baseAddress else { return }
            stamp.draw(luma: base, stride: width, width: width, height: height)
        }
        let rowHeight = FrameStamp.rowHeight(frameHeight: height)
        // The bottom rows as a canvas would give them: grey RGBA.
        let rgba: [UInt8] = luma[(height - FrameStamp.rows * rowHeight) * width..<height * width].flatMap {
            [$0, $0, $0, 255]
        }
        let pixels = FileManager.default.temporaryDirectory.appendingPathComponent("preview-stamp-\(UUID()).rgba")
        try Data(rgba).write(to: pixels)
        defer { try? FileManager.default.removeItem(at: pixels) }

        let output = try await Self.node(
            """
            const pixels = require("fs").readFileSync(process.argv[2]);
            const geometry = stampGeometry(\(width), \(height));
            // One cell of the frame number flipped: the check row catches it.
            const flipped = Buffer.from(pixels);
            const i = ((geometry.rowHeight >> 1) * \(width) + 5 * geometry.cellWidth + (geometry.cellWidth >> 1)) * 4;
            for (let c = 0; c < 3; c++) flipped[i + c] = 255 - flipped[i + c];
            console.log(JSON.stringify({
              geometry, stamp: decodeStamp(pixels, \(width), geometry),
              corrupted: decodeStamp(flipped, \(width), geometry),
            }));
            """, arguments: [pixels.path])
        let decoded = try JSONDecoder().decode(Decoded.self, from: output)
        #expect(decoded.corrupted == nil)
        #expect(decoded.geometry.rowHeight == rowHeight)
        #expect(decoded.geometry.cellWidth == width / FrameStamp.cellsPerRow)
        #expect(decoded.stamp.frame == stamp.frameNumber)
        #expect(decoded.stamp.time == stamp.captureTimeMs)
    }

    @Test func tracksOrderAndLatency() async throws {
        let output = try await Self.node(
            """
            const s = newStampCounts();
            const now = 1_700_000_000_000;
            const low = (t) => t % 2 ** 32;
            const latencies = [[1, 40], [2, 35], [2, 30], [5, 50], [4, 80], [6, 45], [7, 90000]]
              .map(([frame, age]) => trackStamp(s, { frame, time: low(now - age) }, now));
            latencies.push(trackStamp(s, null, now));  // a stamp whose check failed
            // Low bits just before and just after a 2^32 boundary of the clock.
            const boundary = Math.ceil(now / 2 ** 32) * 2 ** 32;
            const wrapped = [
              captureTime(low(boundary - 20), boundary + 10) - boundary,
              captureTime(low(boundary + 5), boundary - 10) - boundary,
            ];
            console.log(JSON.stringify({ stamps: s, latencies, wrapped }));
            """)
        let tracked = try JSONDecoder().decode(Tracked.self, from: output)
        #expect(tracked.stamps.frames == 6)
        #expect(tracked.stamps.lastFrame == 6)
        #expect(tracked.stamps.repeated == 1)
        #expect(tracked.stamps.outOfOrder == 1)
        #expect(tracked.stamps.skipped == 2)
        #expect(tracked.stamps.invalid == 2)
        #expect(tracked.latencies == [40, 35, 30, 50, 80, 45, nil, nil])
        #expect(tracked.wrapped == [-20, 5])
    }

    struct Matched: Decodable {
        struct Stamps: Decodable {
            struct Mismatch: Decodable {
                var frame: Int
                var apartMs: Int
                var read: Int
            }
            var frames: Int
            var outOfOrder: Int
            var repeated: Int
            var skipped: Int
            var mismatched: Int
            var rtpOutOfOrder: Int
            var offset: Double?
            var firstMismatch: Mismatch?
        }
        var stamps: Stamps
        var latencies: [Int?]
    }

    @Test("pictures are matched to the announced frames by RTP timestamp: a picture of another frame is set apart")
    func matchesPicturesToFrames() async throws {
        let output = try await Self.node(
            """
            const s = newStampCounts();
            const now = 1_700_000_000_000;
            // Frame k is captured 40 ms before now - (20 - k) * 33 ms; its RTP timestamp counts 90 kHz from 2^32 - 900
            // (it wraps after frame 0).
            const capture = (k) => now - 40 - (20 - k) * 33;
            const rtp = (k) => (2 ** 32 - 900 + (capture(k) - capture(0)) * 90) % 2 ** 32;
            const stamp = (k) => ({ frame: k, time: capture(k) % 2 ** 32 });
            const latencies = [];
            // Frames 0-4 in order; frame 5 announced but the picture is frame 12's (a newer frame, 231 ms apart);
            // 6, 7; frame 7 announced again (RTP repeats) with its own picture; frame 8.
            for (const [k, picture] of [[0, 0], [1, 1], [2, 2], [3, 3], [4, 4], [5, 12], [6, 6], [7, 7], [7, 7], [8, 8]])
              latencies.push(trackStamp(s, stamp(picture), now - (20 - k) * 33, rtp(k)));
            console.log(JSON.stringify({ stamps: s, latencies }));
            """)
        let matched = try JSONDecoder().decode(Matched.self, from: output)
        #expect(matched.stamps.offset != nil)
        #expect(matched.stamps.mismatched == 1)
        let mismatch = try #require(matched.stamps.firstMismatch)
        #expect(mismatch.frame == 12)
        #expect(mismatch.apartMs == 7 * 33)
        #expect(mismatch.read == 5)
        // Frame 12's picture is not counted: no skip to 12, no disorder after it.
        #expect(matched.stamps.outOfOrder == 0)
        #expect(matched.stamps.skipped == 1, "frame 5 was never read")
        #expect(matched.stamps.repeated == 1)
        #expect(matched.stamps.rtpOutOfOrder == 1)
        #expect(matched.stamps.frames == 9)
        #expect(matched.latencies == [40, 40, 40, 40, 40, nil, 40, 40, 40, 40])
    }
}
