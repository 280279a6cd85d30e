/// What went wrong in DTLS-SRTP. OpenSSL failures carry the call that failed and the text of OpenSSL's error queue
/// (`ERR_get_error` and `ERR_error_string_n`, oldest first).
public enum DTLSError: Error, Sendable, Hashable {
    /// Generating the key pair or the self-signed certificate failed.
    case certificateGeneration(call: String, reason: String)
    /// Setting up the OpenSSL context or connection failed (or a parameter such as the MTU was refused).
    case configuration(call: String, reason: String)
    /// The handshake (or the association after it) failed: a fatal alert sent or received, a malformed flight, a
    /// certificate refused by the peer.
    case handshakeFailure(call: String, reason: String)
    /// The peer's certificate does not have the fingerprint its SDP announced; no keys are released.
    case fingerprintMismatch(expected: DTLSFingerprint, actual: DTLSFingerprint)
    /// The handshake completed without the use_srtp extension agreeing on a profile (RFC 5764 §4.1.2).
    case noSRTPProfile
    /// The handshake did not complete in time (or OpenSSL gave up retransmitting).
    case timeout(milliseconds: Int64)
    /// The peer closed the association (close_notify).
    case closedByPeer
    /// An SDP fingerprint value could not be parsed, or names an unknown hash, or has the wrong length.
    case invalidFingerprint(String)
}
