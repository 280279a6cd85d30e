/// Why an SDP `candidate` attribute could not be read (RFC 8839 §5.1).
public enum ICECandidateParseError: Error, Sendable, Hashable, Codable {
    /// Fewer than the eight mandatory fields (foundation … `typ` type), or no `typ` keyword where it belongs.
    case missingFields(String)
    /// The component ID is not a number in 1…256.
    case invalidComponent(String)
    /// The transport is neither UDP nor TCP.
    case unsupportedTransport(String)
    /// The priority is not a number in 1…2³¹−1.
    case invalidPriority(String)
    /// The connection address is not a numeric IPv4 or IPv6 address (an mDNS `.local` name, for one).
    case invalidAddress(String)
    /// A port is not a number in 0…65535.
    case invalidPort(String)
    /// The candidate type is not `host`, `srflx`, `prflx` or `relay`.
    case invalidType(String)
}
