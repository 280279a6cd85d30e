/// What an ICE agent has done, for logs and probes.
public struct ICEStatistics: Sendable, Hashable, Codable {
    /// Connectivity checks sent (new transactions, not counting retransmissions).
    public var checksSent = 0
    /// Retransmitted requests (checks, consent, STUN server).
    public var retransmissions = 0
    /// Binding requests received from the peer (valid or not).
    public var checksReceived = 0
    /// Checks of ours that succeeded.
    public var successes = 0
    /// Checks of ours that failed (timeout, error response, asymmetric response).
    public var failures = 0
    /// Inbound messages with a bad MESSAGE-INTEGRITY or a bad or missing FINGERPRINT.
    public var integrityFailures = 0
    /// Inbound requests whose USERNAME is not `"ourUfrag:theirUfrag"`.
    public var usernameMismatches = 0
    /// Role conflicts seen (RFC 8445 §7.3.1.1), whichever side switched.
    public var roleConflicts = 0
    /// Error responses sent (401, 487).
    public var errorResponsesSent = 0
    /// Peer-reflexive remote candidates learned from checks.
    public var peerReflexiveCandidates = 0
    /// Server-reflexive local candidates gathered from STUN servers.
    public var serverReflexiveCandidates = 0
    /// Relayed local candidates gathered from TURN servers.
    public var relayCandidates = 0
    /// TURN allocations that failed (wrong credentials, no answer, an error response).
    public var relayFailures = 0
    /// Datagrams dropped because they came straight to a host socket while the policy is ``ICETransportPolicy/relay``.
    public var droppedByPolicy = 0
    /// The selected pair, once there is one.
    public var selectedPair: ICECandidatePair?
    /// The round-trip time of the last successful check or consent request.
    public var lastRoundTrip: Duration?
    /// The sum of every round trip measured by a check or consent request (W3C `totalRoundTripTime`).
    public var totalRoundTrip: Duration = .zero
    /// How many round trips ``totalRoundTrip`` sums.
    public var roundTripMeasurements = 0
    /// Success responses we sent to the peer's checks and consent requests.
    public var responsesSent = 0
    /// Consent freshness requests sent (RFC 7675).
    public var consentRequestsSent = 0
    /// Consent freshness responses received.
    public var consentResponsesReceived = 0
    /// From the first check sent to the selected pair.
    public var timeToConnected: Duration?

    /// Empty statistics.
    public init() {}
}
