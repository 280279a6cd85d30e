/// ICE credentials (RFC 8445 §5.3, RFC 8839 §5.4): the username fragment and password of one side.
///
/// Checks carry USERNAME `"receiverUfrag:senderUfrag"` and MESSAGE-INTEGRITY keyed with the receiver's password.
public struct ICECredentials: Sendable, Hashable, Codable {
    /// The username fragment (`a=ice-ufrag`).
    public var ufrag: String
    /// The password (`a=ice-pwd`).
    public var password: String

    /// Credentials as given (a peer's, from its SDP); see ``isValid``.
    public init(ufrag: String, password: String) {
        self.ufrag = ufrag
        self.password = password
    }

    /// The characters ICE allows: ALPHA, DIGIT, `+`, `/` (RFC 8839 §5.4).
    static let iceChars = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")

    /// Fresh random credentials: an 8-character ufrag and a 24-character password (more than the 24 and 128 bits
    /// of randomness RFC 8445 asks for), from the system's cryptographic generator.
    public static func random() -> ICECredentials {
        var generator = SystemRandomNumberGenerator()
        return ICECredentials(ufrag: randomString(8, using: &generator), password: randomString(24, using: &generator))
    }

    private static func randomString(_ count: Int, using generator: inout SystemRandomNumberGenerator) -> String {
        // 64 characters: 6 uniform bits each, no modulo bias.
        String(
            (0..<count).map { _ in
                let bits: UInt8 = generator.next()
                return iceChars[Int(bits & 0x3F)]
            })
    }

    /// Whether both fields are ice-chars of the lengths RFC 8839 §5.4 requires: ufrag 4…256, password 22…256.
    public var isValid: Bool {
        let allowed = Set(Self.iceChars)
        return (4...256).contains(ufrag.count) && (22...256).contains(password.count)
            && ufrag.allSatisfy(allowed.contains) && password.allSatisfy(allowed.contains)
    }
}
