/// Something an `ICEAgent` reports through `ICEAgent/pollEvent()`.
public enum ICEEvent: Sendable, Hashable, Codable {
    /// The connection state changed.
    case stateChanged(ICEState)
    /// A local candidate was gathered (server-reflexive from a STUN server, relayed from a TURN server): signal it to
    /// the peer (trickle).
    case localCandidate(ICECandidate)
    /// A TURN server gave no relayed candidate (or lost the allocation): wrong credentials, no answer, an error.
    case relayFailed(TURNError)
    /// Every STUN and TURN server answered or gave up: no more local candidates (signal end-of-candidates).
    case gatheringComplete
    /// The pair media uses was selected (or changed).
    case selectedPair(ICECandidatePair)
    /// The agent switched role after a role conflict.
    case roleChanged(ICERole)
}
