/// Which local candidates an agent offers and pairs, as `RTCIceTransportPolicy` in browsers.
public enum ICETransportPolicy: String, Sendable, Hashable, Codable, CaseIterable {
    /// Host, server-reflexive and relayed candidates.
    case all
    /// Relayed candidates only: every datagram goes through a TURN server (proves TURN works; gets through
    /// firewalls that let nothing but the TURN server's address out).
    case relay
}
