/// An ICE agent's role (RFC 8445 §6.1.1): the controlling agent nominates the pair, the controlled one follows.
public enum ICERole: String, Sendable, Hashable, Codable {
    /// Nominates (USE-CANDIDATE) the pair both sides use. Our publisher's role: a conference server answering an
    /// offer takes the controlled role and never nominates.
    case controlling
    /// Uses the pair the controlling agent nominates.
    case controlled
}
