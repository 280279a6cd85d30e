/// What went wrong in SRTP keying or packet processing. libsrtp statuses map to cases; the rest keep their number.
public enum SRTPError: Error, Sendable, Hashable {
    /// The key or salt has the wrong length for the profile.
    case invalidKeyLength(expectedKey: Int, expectedSalt: Int, actualKey: Int, actualSalt: Int)
    /// The RFC 4568 inline key was not valid base64 of 30 (AES-CM) or 28 (GCM) bytes.
    case invalidBase64(String)
    /// The packet failed authentication (wrong key, tampered bytes): `srtp_err_status_auth_fail`.
    case authenticationFailed
    /// The packet was already received (`srtp_err_status_replay_fail`).
    case replayed
    /// The packet is older than the replay window (`srtp_err_status_replay_old`).
    case replayTooOld
    /// The buffer has no room for the SRTP trailer, or the length is outside the buffer.
    case bufferTooSmall(needed: Int, available: Int)
    /// Another libsrtp failure: the call and its `srtp_err_status_t` value.
    case libsrtp(call: String, status: Int32)
}
