/// A certificate fingerprint as SDP's `a=fingerprint` carries it (RFC 8122 §5): a hash function's name and the
/// digest of the DER-encoded certificate, rendered `sha-256 AB:CD:…` (uppercase hex pairs separated by colons).
///
/// Encodes and decodes (`Codable`) as that rendered string.
public struct DTLSFingerprint: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The hash function's name as SDP spells it, lowercase: `sha-256` (the only one WebRTC endpoints must
    /// support), `sha-1`, `sha-224`, `sha-384` or `sha-512`.
    public let algorithm: String
    /// The digest bytes (32 for SHA-256).
    public let bytes: [UInt8]

    /// The digest length of each hash function this type accepts.
    static let digestLengths: [String: Int] = [
        "sha-1": 20, "sha-224": 28, "sha-256": 32, "sha-384": 48, "sha-512": 64,
    ]

    /// Creates a fingerprint, checking that `algorithm` is known and `bytes` has its digest length.
    public init(algorithm: String, bytes: [UInt8]) throws(DTLSError) {
        let name = algorithm.lowercased()
        guard let length = Self.digestLengths[name] else {
            throw .invalidFingerprint("unknown hash function \"\(algorithm)\"")
        }
        guard bytes.count == length else {
            throw .invalidFingerprint("\(name) digest of \(bytes.count) bytes, expected \(length)")
        }
        self.algorithm = name
        self.bytes = bytes
    }

    /// Parses the value of an SDP `a=fingerprint` attribute, such as `sha-256 AB:CD:…` (hash name and hex digits
    /// are case-insensitive; surrounding spaces are ignored).
    public init(sdpValue text: String) throws(DTLSError) {
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard parts.count == 2 else {
            throw .invalidFingerprint("expected \"<hash> <hex>\", got \"\(text.prefix(200))\"")
        }
        var bytes: [UInt8] = []
        for pair in parts[1].split(separator: ":", omittingEmptySubsequences: false) {
            guard pair.utf8.count == 2, pair.allSatisfy(\.isHexDigit), let byte = UInt8(pair, radix: 16) else {
                throw .invalidFingerprint("bad hex byte \"\(pair.prefix(16))\"")
            }
            bytes.append(byte)
        }
        try self.init(algorithm: String(parts[0]), bytes: bytes)
    }

    /// The SDP `a=fingerprint` value: `sha-256 AB:CD:…`.
    public var sdpValue: String {
        let digits = Array("0123456789ABCDEF".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(bytes.count * 3)
        for (index, byte) in bytes.enumerated() {
            if index > 0 { hex.append(UInt8(ascii: ":")) }
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0F)])
        }
        return algorithm + " " + String(decoding: hex, as: UTF8.self)
    }

    /// The SDP form, ``sdpValue``.
    public var description: String { sdpValue }

    /// Decodes the SDP form from a single string.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            try self.init(sdpValue: text)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "\(error)")
        }
    }

    /// Encodes the SDP form as a single string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(sdpValue)
    }
}
