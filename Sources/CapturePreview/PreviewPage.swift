import Foundation

/// The preview page served at `/`: plain HTML and JavaScript, no external resources.
///
/// It plays the camera through WHEP (a recvonly video transceiver; the offer is POSTed, ICE candidates gathered
/// first, to `/whep` or to the `?whep=URL` of the query string, so it also plays other servers' streams) and shows
/// the video's size, frame rate and bit rate (`getStats()` inbound-rtp), rotation (the server's figures and the
/// picture's aspect), RTT (the selected candidate pair), frames decoded and freezes. It reads the synthetic camera's
/// frame stamp (frame number, capture time and a check, three rows of 32 cells at the bottom of each frame) with
/// `requestVideoFrameCallback`, counting frames out of order, repeated or skipped and measuring glass-to-glass latency
/// (p50, p95). Everything is in `window.previewState`; with `?seconds=N&report=URL` it POSTs a JSON summary to `URL`
/// after N seconds (`text/plain`, no preflight) and ends the viewer. The viewer's resource is DELETEd on unload.
///
/// ## Resource files
///
/// The page is three resource files of this module (`Sources/CapturePreview/Resources/`), read once, on first use,
/// through ``resourceBundle()``: `preview.html`, `preview.js` (the page's program) and `stamp.js` (``stampScript()``).
/// The HTML loads each script with a `<script src>` element, which is replaced by the script inline: the page is served
/// as one self-contained response, so a copy served from elsewhere (another origin watching with `?whep=`) still runs.
/// A file that is missing, unreadable or not UTF-8 is a ``PreviewPageError``; the server then answers `/` with 500 and
/// the error's description, and logs it when it starts.
public enum PreviewPage {
    /// The page's HTML with both scripts inline, as the server sends it.
    public static func html() throws(PreviewPageError) -> String {
        try bundled.get().html
    }

    /// The script that reads the synthetic camera's `FrameStamp` (CaptureCore) back from a `<video>` element
    /// (`stamp.js`; the preview page inlines it, and a page of your own, such as a viewer behind an SFU, can load it
    /// too): `watchStamps(video, stamps, onLatency)` counts every presented frame's stamp into
    /// `stamps = newStampCounts()` (frames read, out of order, repeated, skipped, unreadable; announced frames out of
    /// RTP order; pictures that were not the announced frame) and hands its glass-to-glass latency in milliseconds to
    /// `onLatency`; `latencySummary(latencies)` gives `{ count, p50, p95 }`.
    /// The clock is the page's `Date.now()`: a latency is meaningful when the camera and the page share a machine.
    public static func stampScript() throws(PreviewPageError) -> String {
        try bundled.get().stampScript
    }

    /// The page's text, read and put together.
    struct Contents: Sendable, Hashable {
        /// The HTML with both scripts inline.
        let html: String
        /// `stamp.js`.
        let stampScript: String
    }

    /// The page from this module's resource bundle, read on first use and kept; a failure is kept too, and every
    /// request for the page gets it.
    static let bundled = Result { () throws(PreviewPageError) -> Contents in try load(from: resourceBundle()) }

    /// This module's resource bundle, looked for where SwiftPM puts it: beside the executable (or the test bundle).
    /// Not the generated `Bundle.module`, which traps when the bundle is missing; here that is
    /// ``PreviewPageError/missing(_:)``, and the server answers 500.
    static func resourceBundle() throws(PreviewPageError) -> Bundle {
        let name = "swift-camera-capture_CapturePreview.resources"
        let places = [
            Bundle.main.bundleURL, Bundle.main.resourceURL, Bundle.main.executableURL?.deletingLastPathComponent(),
            CommandLine.arguments.first.map { URL(fileURLWithPath: $0).deletingLastPathComponent() },
        ]
        for case let place? in places {
            if let bundle = Bundle(url: place.appendingPathComponent(name)) { return bundle }
        }
        throw .missing(name)
    }

    /// The folder of the resource files in the bundle (`.copy("Resources")` in Package.swift).
    static let directory = "Resources"

    /// Reads the page's files from `bundle`'s ``directory`` and inlines the scripts in the HTML.
    static func load(from bundle: Bundle) throws(PreviewPageError) -> Contents {
        var html = try read("preview.html", from: bundle)
        let stampScript = try read("stamp.js", from: bundle)
        let program = try read("preview.js", from: bundle)
        try inline(stampScript, file: "stamp.js", opening: #"<script id="stamp">"#, in: &html)
        try inline(program, file: "preview.js", opening: "<script>", in: &html)
        return Contents(html: html, stampScript: stampScript)
    }

    /// Replaces the element that loads `file` in `html` (`opening` with `src="file"` added, then `</script>`) by
    /// `opening`, a line feed, `script` (which ends with one) and `</script>`.
    static func inline(
        _ script: String, file: String, opening: String, in html: inout String
    ) throws(PreviewPageError) {
        let element = String(opening.dropLast()) + #" src=""# + file + #""></script>"#
        guard let range = html.range(of: element) else { throw .scriptNotLoaded(file) }
        html.replaceSubrange(range, with: opening + "\n" + script + "</script>")
    }

    /// The text of `file` (a name with one extension) in `bundle`'s ``directory``.
    static func read(_ file: String, from bundle: Bundle) throws(PreviewPageError) -> String {
        let parts = file.split(separator: ".", maxSplits: 1)
        guard parts.count == 2,
            let url = bundle.url(
                forResource: String(parts[0]), withExtension: String(parts[1]), subdirectory: directory)
        else { throw .missing(file) }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw .unreadable(file, reason: "\(error)")
        }
        guard let text = String(validating: data, as: UTF8.self) else { throw .notUTF8(file) }
        return text
    }
}
