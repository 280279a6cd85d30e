/// Where a `DTLSEndpoint` is in its life.
public enum DTLSState: Sendable, Hashable {
    /// Created, not started.
    case new
    /// Handshaking.
    case connecting
    /// Handshake complete, peer fingerprint verified, SRTP keys exported.
    case connected
    /// The handshake or the association failed; nothing more is sent or accepted.
    case failed(DTLSError)
    /// Closed by us (`DTLSEndpoint/close()`) or by the peer's close_notify.
    case closed
}
