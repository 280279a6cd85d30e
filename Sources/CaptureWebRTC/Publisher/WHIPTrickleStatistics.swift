/// What a ``WHIPPublisher`` trickled after its offer (RFC 9725 §4.3.1, RFC 8840): the candidates gathered from the
/// STUN and TURN servers the endpoint announced in its 201's `Link` headers (and any gathered after the offer), each
/// PATCHed as an `application/trickle-ice-sdpfrag`, then `a=end-of-candidates`.
public struct WHIPTrickleStatistics: Sendable, Hashable, Codable {
    /// The `Link` servers used (their URLs): those the user had not configured already (same URL and credentials).
    public var linkICEServers: [String] = []
    /// Candidates PATCHed and accepted (2xx).
    public var candidatesTrickled = 0
    /// PATCHes answered 2xx, end-of-candidates included.
    public var patchesAccepted = 0
    /// PATCHes the resource refused as unsupported (405 or 501: no trickle there); nothing more is PATCHed then.
    public var patchesRefused = 0
    /// PATCHes that failed otherwise (another status, a timeout, a transport error): logged, harmless.
    public var patchesFailed = 0
    /// Whether `a=end-of-candidates` was PATCHed and accepted.
    public var endOfCandidatesSent = false

    /// Empty statistics.
    public init() {}
}
