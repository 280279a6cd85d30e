/// The WebRTC side of the preview: answers viewers' WHEP offers, ends viewers, and reports the stream's figures.
///
/// The preview server's router calls it from Swift concurrency (never on an event loop), possibly for several
/// viewers at once.
public protocol WHEPSessionHandler: Sendable {
    /// Answers a viewer's SDP `offer` (from the peer at `remote`, "host:port"): returns the SDP answer and the new
    /// viewer's id (URL-safe: letters, digits, `-`, `_`), or throws a ``WHEPRequestError`` carrying the HTTP status
    /// and message the viewer gets.
    func answer(offer: String, remote: String) async throws(WHEPRequestError) -> (answer: String, viewerID: String)

    /// Ends the viewer `viewerID`; returns `false` when there is no such viewer (the server answers 404).
    func end(viewerID: String) async -> Bool

    /// The stream's current figures, for the page.
    func figures() async -> PreviewFigures
}
