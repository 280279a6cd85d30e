internal import CSSL

/// What went wrong in SRTP keying or packet processing. libsrtp statuses map to cases; the rest keep their number.
public enum SRTPError: Error, Sendable, Hashable {
    /// The key or salt has the wrong length for the profile.
    case invalidKeyLength(expectedKey: Int, expectedSalt: Int, actualKey: Int, actualSalt: Int)
    /// The RFC 4568 inline key was not valid base64 of 30 (AES-CM) or 28 (GCM) bytes.
    case invalidBase64(String)
    /// The packet failed authentication (wrong key, tampered bytes): `srtp_err_status_auth_fail`.
    case authenticationFailed
    /// The packet was already received (`srtp_err_status_replay_fail`), or a sender with replay protection was asked
    /// to protect a packet index it already protected.
    case replayed
    /// The packet is older than the replay window (`srtp_err_status_replay_old`).
    case replayTooOld
    /// The buffer has no room for the SRTP trailer, the length is outside the buffer, or the packet is shorter than
    /// its RTP or RTCP header says (then `needed` is the header's length and `available` the packet's).
    case bufferTooSmall(needed: Int, available: Int)
    /// Another libsrtp failure: the call and its `srtp_err_status_t` value.
    case libsrtp(call: String, status: Int32)
    /// An OpenSSL (libcrypto) call of the sender's SRTP transform failed: the call and the oldest code on the
    /// thread's OpenSSL error queue (`ERR_get_error`; 0 when nothing was queued).
    case openssl(call: String, code: UInt)
    /// An SSRC's SRTCP index reached its 31-bit limit (2^31 − 1 packets): the session needs new keys (libsrtp's
    /// `srtp_err_status_key_expired`).
    case keyExpired
}

extension SRTPError {
    /// ``openssl(call:code:)`` for `call`, with the calling thread's oldest queued OpenSSL error. The queue is
    /// emptied, so that another OpenSSL user on this thread (DTLS reads it through `SSL_get_error`) does not take our
    /// failure for its own.
    static func openSSLFailure(_ call: String) -> SRTPError {
        let code = ERR_get_error()
        ERR_clear_error()
        return .openssl(call: call, code: code)
    }

    /// Throws ``openSSLFailure(_:)`` for `call` unless `result` is 1, libcrypto's success.
    @inline(__always)
    static func requireOpenSSLSuccess(_ result: Int32, _ call: String) throws(SRTPError) {
        guard result == 1 else { throw openSSLFailure(call) }
    }
}
