public import CaptureRTP

/// The SRTP keys DTLS agreed (RFC 5764 §4.2): ours protect what we send, the peer's what it sends.
public struct DTLSSRTPKeys: Sendable, Hashable, Codable {
    /// The negotiated protection profile.
    public var profile: SRTPProfile
    /// Our master key and salt.
    public var local: SRTPKeyingMaterial
    /// The peer's master key and salt.
    public var remote: SRTPKeyingMaterial

    /// Creates a set of keys.
    public init(profile: SRTPProfile, local: SRTPKeyingMaterial, remote: SRTPKeyingMaterial) {
        self.profile = profile
        self.local = local
        self.remote = remote
    }
}
