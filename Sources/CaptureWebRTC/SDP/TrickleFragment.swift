/// A trickle ICE fragment (RFC 8840, `application/trickle-ice-sdpfrag`) as a WHIP client PATCHes it (RFC 9725 §4.3):
/// our ICE credentials, the first bundled m-line (`m=video 9 UDP/TLS/RTP/SAVPF 0`) with its `a=mid`, the candidates
/// gathered since the last PATCH and, once gathering is over, `a=end-of-candidates`.
public struct TrickleFragment: Sendable, Hashable, Codable {
    /// The HTTP content type of a fragment.
    public static let contentType = "application/trickle-ice-sdpfrag"

    /// Our ICE username fragment.
    public var iceUfrag: String
    /// Our ICE password.
    public var icePassword: String
    /// The media identification of the first bundled m-line (`"0"` by default).
    public var mid: String
    /// Candidate attribute values (`"1 1 udp 2130706431 10.0.0.1 5000 typ host"`; a leading `candidate:` is dropped).
    public var candidates: [String]
    /// Whether to end with `a=end-of-candidates`.
    public var endOfCandidates: Bool

    /// Creates a fragment.
    public init(
        iceUfrag: String, icePassword: String, mid: String = "0", candidates: [String], endOfCandidates: Bool = false
    ) {
        self.iceUfrag = iceUfrag
        self.icePassword = icePassword
        self.mid = mid
        self.candidates = candidates
        self.endOfCandidates = endOfCandidates
    }

    /// The fragment's text with CRLF line ends.
    public func render() -> String {
        var lines = [
            "a=ice-ufrag:\(iceUfrag)",
            "a=ice-pwd:\(icePassword)",
            "m=video 9 UDP/TLS/RTP/SAVPF 0",
            "a=mid:\(mid)",
        ]
        lines += candidates.map { "a=candidate:\(PublishOffer.candidateValue($0))" }
        if endOfCandidates { lines.append("a=end-of-candidates") }
        return lines.map { $0 + "\r\n" }.joined()
    }
}
