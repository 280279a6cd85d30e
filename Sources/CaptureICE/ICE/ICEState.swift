/// An ICE agent's connection state.
public enum ICEState: String, Sendable, Hashable, Codable {
    /// Nothing checked yet (no remote credentials or candidates).
    case new
    /// Connectivity checks are running; no pair is selected.
    case checking
    /// A pair is selected and consent is fresh: media may flow (`ICEAgent/canSendMedia`).
    case connected
    /// Every pair failed (after end-of-candidates, or the checking timeout): no path.
    case failed
    /// Consent was lost (RFC 7675: no response to consent checks for 30 s): media must stop.
    case disconnected
    /// The agent was closed.
    case closed
}
