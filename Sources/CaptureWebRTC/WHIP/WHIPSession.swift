import Foundation

/// A published WHIP session: where it lives, its entity tag, the endpoint's answer and the ICE servers it announced.
public struct WHIPSession: Sendable, Hashable, Codable {
    /// The session URL (the 201's `Location`, resolved against the URL that was POSTed to).
    public var resourceURL: URL
    /// The URL that answered the POST (the endpoint after redirects).
    public var endpointURL: URL
    /// The `ETag` of the 201 (as sent, quotes included), or `nil`; sent as `If-Match` by PATCH.
    public var etag: String?
    /// The answer's text as received.
    public var answerSDP: String
    /// The parsed answer.
    public var answer: PublishAnswer
    /// The ICE servers of the 201's `Link: …; rel="ice-server"` headers.
    public var iceServers: [ICEServer]
    /// The `Accept-Patch` header, or `nil` (`application/trickle-ice-sdpfrag` when the server takes trickle).
    public var acceptPatch: String?

    /// Creates a session.
    public init(
        resourceURL: URL, endpointURL: URL, etag: String?, answerSDP: String, answer: PublishAnswer,
        iceServers: [ICEServer] = [], acceptPatch: String? = nil
    ) {
        self.resourceURL = resourceURL
        self.endpointURL = endpointURL
        self.etag = etag
        self.answerSDP = answerSDP
        self.answer = answer
        self.iceServers = iceServers
        self.acceptPatch = acceptPatch
    }
}
