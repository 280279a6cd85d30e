internal import CSRTP
import CaptureCore

/// libsrtp's one-time global initialization. A Swift global is initialized exactly once, thread-safely, on first use.
private let srtpLibraryStatus: Int32 = Int32(bitPattern: srtp_init().rawValue)

/// One SRTP/SRTCP crypto context for one direction of a call.
///
/// A `.sender` session protects outgoing RTP and RTCP for any SSRC it sends; a `.receiver` session unprotects
/// incoming packets from any SSRC. Use one session per direction. Packets are processed in place: protecting appends
/// the auth tag (up to ``maximumTrailerLength`` bytes), so the caller leaves that room after the packet.
///
/// A sender protects with our own transform on OpenSSL's libcrypto (`SRTPProtector`), which allocates nothing per
/// packet and produces libsrtp's bytes; Debian's libsrtp2, built on NSS, allocates 5 (GCM) to 14 (AES-CM) times per
/// packet. Unprotecting, with its replay window, is libsrtp2's in both roles (a sender session keeps a libsrtp2
/// context for it too, so that its unprotect methods behave as before).
///
/// Thread safety: every call takes the session's lock (a `Locked`), so a session may be shared between threads; the
/// intended use is one thread per session (the lock is then uncontended). Protecting as a sender allocates nothing
/// per packet (measured with `capture-bench send --isolated yes`); unprotecting costs what libsrtp2 costs.
public final class SRTPSession: Sendable {
    /// Which direction a session serves.
    public enum Role: String, Sendable, Hashable, Codable {
        /// Protects what we send, for any SSRC (`SRTPProtector`; libsrtp `ssrc_any_outbound` for unprotect calls).
        case sender
        /// Unprotects what we receive (libsrtp `ssrc_any_inbound`).
        case receiver
    }

    /// Counters of what the session did.
    public struct Statistics: Sendable, Hashable, Codable {
        /// Packets (RTP and RTCP) protected.
        public var protected: UInt64 = 0
        /// Packets (RTP and RTCP) unprotected successfully.
        public var unprotected: UInt64 = 0
        /// Packets rejected because authentication failed.
        public var authenticationFailures: UInt64 = 0
        /// Packets rejected as replays (repeated or too old).
        public var replayRejections: UInt64 = 0
        /// Packets rejected for any other reason.
        public var otherFailures: UInt64 = 0

        /// Creates zeroed counters.
        public init() {}
    }

    /// The most bytes protecting a packet can append (libsrtp `SRTP_MAX_TRAILER_LEN`, which covers a tag and an
    /// MKI; our sender's trailer, at most 20 bytes, fits in it).
    public static let maximumTrailerLength = Int(csrtp_max_trailer_length)

    /// How many packets back a sequence number is remembered: libsrtp's replay window, and our sender's window for
    /// repeated or late sequence numbers.
    static let replayWindowSize = 1024

    /// The role this session was created for.
    public let role: Role
    /// The protection profile.
    public let profile: SRTPProfile
    /// The libsrtp context. `nonisolated(unsafe)` is sound: libsrtp contexts are not thread-safe, and every use of
    /// this one (protect/unprotect) happens inside `statistics.withLock`, so at most one thread touches it at a time;
    /// `deinit` frees it when no other reference, hence no other use, can exist.
    nonisolated(unsafe) private let context: OpaquePointer
    /// The sender's transform (`nil` for a receiver). `nonisolated(unsafe)` is sound for the same reason as
    /// `context`'s: it is only used inside `counters.withLock`, and freed by `deinit` alone.
    nonisolated(unsafe) private let protector: SRTPProtector?
    private let counters: Locked<Statistics>

    /// Creates a session.
    ///
    /// - Parameters:
    ///   - role: sender (protect) or receiver (unprotect).
    ///   - keyingMaterial: the master key and salt; their lengths must match `profile`.
    ///   - profile: the crypto suite.
    ///   - replayProtection: when `false` on a sender, the same sequence number may be protected again (libsrtp's
    ///     `allow_repeat_tx`, for retransmissions). A receiver always checks replays (libsrtp2 cannot turn it off).
    public init(
        role: Role, keyingMaterial: SRTPKeyingMaterial, profile: SRTPProfile = .aesCM128HMACSHA1_80,
        replayProtection: Bool = true
    ) throws(SRTPError) {
        guard keyingMaterial.key.count == profile.keyLength, keyingMaterial.salt.count == profile.saltLength else {
            throw .invalidKeyLength(
                expectedKey: profile.keyLength, expectedSalt: profile.saltLength,
                actualKey: keyingMaterial.key.count, actualSalt: keyingMaterial.salt.count)
        }
        // Before srtp_create: if the protector throws, there is no libsrtp context to free yet.
        let protector =
            role == .sender
            ? try SRTPProtector(
                keyingMaterial: keyingMaterial, profile: profile, replayProtection: replayProtection,
                windowSize: Self.replayWindowSize) : nil
        let context = try Self.libsrtpContext(
            role: role, keyingMaterial: keyingMaterial, profile: profile, replayProtection: replayProtection)
        self.role = role
        self.profile = profile
        self.context = context
        self.protector = protector
        counters = Locked(Statistics())
    }

    deinit {
        srtp_dealloc(context)
    }

    /// A new libsrtp2 context (`srtp_t`, the caller frees it with `srtp_dealloc`) with the policy a session of `role`
    /// gives it: the profile's crypto policies for RTP and RTCP, any SSRC (`ssrc_any_outbound` for a sender,
    /// `ssrc_any_inbound` for a receiver), a ``replayWindowSize`` window and `allow_repeat_tx` unless
    /// `replayProtection`. Runs `srtp_init` first, once per process. Also the tests' reference sender.
    static func libsrtpContext(
        role: Role, keyingMaterial: SRTPKeyingMaterial, profile: SRTPProfile, replayProtection: Bool
    ) throws(SRTPError) -> OpaquePointer {
        guard srtpLibraryStatus == 0 else { throw .libsrtp(call: "srtp_init", status: srtpLibraryStatus) }
        var policy = srtp_policy_t()
        switch profile {
        case .aesCM128HMACSHA1_80:
            srtp_crypto_policy_set_rtp_default(&policy.rtp)
            srtp_crypto_policy_set_rtcp_default(&policy.rtcp)
        case .aeadAES128GCM:
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtp)
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtcp)
        }
        policy.ssrc.type = role == .sender ? ssrc_any_outbound : ssrc_any_inbound
        policy.window_size = UInt(Self.replayWindowSize)
        policy.allow_repeat_tx = replayProtection ? 0 : 1
        var keyBytes = keyingMaterial.key + keyingMaterial.salt
        var context: OpaquePointer?
        let status = keyBytes.withUnsafeMutableBufferPointer { key in
            policy.key = key.baseAddress
            return srtp_create(&context, &policy)
        }
        guard status == srtp_err_status_ok, let context else {
            throw .libsrtp(call: "srtp_create", status: Int32(bitPattern: status.rawValue))
        }
        return context
    }

    /// A snapshot of the counters.
    public var statistics: Statistics { counters.withLock { $0 } }

    /// Encrypts and authenticates the RTP packet in `buffer[0..<length]` in place; `length` grows by the trailer.
    public func protectRTP(_ buffer: UnsafeMutableRawBufferPointer, length: inout Int) throws(SRTPError) {
        try process(buffer, &length, protecting: true) { (buffer, size) throws(SRTPError) in
            if let protector {
                try protector.protectRTP(buffer, length: &size)
            } else {
                try libsrtp(buffer, &size, call: "srtp_protect") { srtp_protect($0, $1, $2) }
            }
        }
    }

    /// Authenticates and decrypts the SRTP packet in `buffer[0..<length]` in place; `length` shrinks to the RTP packet.
    public func unprotectRTP(_ buffer: UnsafeMutableRawBufferPointer, length: inout Int) throws(SRTPError) {
        try process(buffer, &length, protecting: false) { (buffer, size) throws(SRTPError) in
            try libsrtp(buffer, &size, call: "srtp_unprotect") { srtp_unprotect($0, $1, $2) }
        }
    }

    /// Protects the RTCP compound packet in `buffer[0..<length]` in place (SRTCP index and tag appended).
    public func protectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: inout Int) throws(SRTPError) {
        try process(buffer, &length, protecting: true) { (buffer, size) throws(SRTPError) in
            if let protector {
                try protector.protectRTCP(buffer, length: &size)
            } else {
                try libsrtp(buffer, &size, call: "srtp_protect_rtcp") { srtp_protect_rtcp($0, $1, $2) }
            }
        }
    }

    /// Unprotects the SRTCP packet in `buffer[0..<length]` in place.
    public func unprotectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: inout Int) throws(SRTPError) {
        try process(buffer, &length, protecting: false) { (buffer, size) throws(SRTPError) in
            try libsrtp(buffer, &size, call: "srtp_unprotect_rtcp") { srtp_unprotect_rtcp($0, $1, $2) }
        }
    }

    /// Checks the buffer, runs `operation` under the lock and counts its outcome.
    private func process(
        _ buffer: UnsafeMutableRawBufferPointer, _ length: inout Int, protecting: Bool,
        _ operation: (UnsafeMutableRawBufferPointer, inout Int) throws(SRTPError) -> Void
    ) throws(SRTPError) {
        let needed = protecting ? length + Self.maximumTrailerLength : length
        guard length > 0, needed <= buffer.count, buffer.baseAddress != nil, length <= Int(Int32.max) else {
            throw .bufferTooSmall(needed: needed, available: buffer.count)
        }
        let start = length
        let outcome: Result<Int, SRTPError> = counters.withLock { counters in
            var size = start
            do throws(SRTPError) {
                try operation(buffer, &size)
            } catch {
                switch error {
                case .authenticationFailed: counters.authenticationFailures += 1
                case .replayed, .replayTooOld: counters.replayRejections += 1
                default: counters.otherFailures += 1
                }
                return .failure(error)
            }
            if protecting { counters.protected += 1 } else { counters.unprotected += 1 }
            return .success(size)
        }
        length = try outcome.get()
    }

    /// Runs one libsrtp call on `buffer[0..<size]` (in the lock) and maps its status to an error.
    private func libsrtp(
        _ buffer: UnsafeMutableRawBufferPointer, _ size: inout Int, call: String,
        _ function: (OpaquePointer, UnsafeMutableRawPointer, UnsafeMutablePointer<Int32>) -> srtp_err_status_t
    ) throws(SRTPError) {
        guard let base = buffer.baseAddress else { throw .bufferTooSmall(needed: size, available: 0) }
        var length = Int32(size)
        let status = function(context, base, &length)
        switch status {
        case srtp_err_status_ok: size = Int(length)
        case srtp_err_status_auth_fail: throw .authenticationFailed
        case srtp_err_status_replay_fail: throw .replayed
        case srtp_err_status_replay_old: throw .replayTooOld
        default: throw .libsrtp(call: call, status: Int32(bitPattern: status.rawValue))
        }
    }
}
