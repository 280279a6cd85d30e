public import CaptureICE
internal import CaptureNet

/// One ICE candidate, as W3C webrtc-stats' `RTCIceCandidateStats` (type `local-candidate` or `remote-candidate`).
public struct RTCIceCandidateStats: Sendable, Hashable, Codable {
    /// `local-candidate` or `remote-candidate`.
    public var type: RTCStatsType
    /// The stats id: `I` and the candidate's foundation, address and port, so that the same candidate keeps its id.
    public var id: String
    /// The transport's stats id (W3C `transportId`).
    public var transportId = "T01"
    /// The candidate's IP address (W3C `address`).
    public var address: String
    /// Its port (W3C `port`).
    public var port: Int
    /// Its transport protocol (W3C `protocol`: `udp`).
    public var `protocol`: String
    /// Its type (W3C `candidateType`: `host`, `srflx`, `prflx` or `relay`).
    public var candidateType: ICECandidate.Kind
    /// Its priority (W3C `priority`).
    public var priority: UInt32
    /// Its foundation (W3C `foundation`).
    public var foundation: String
    /// The related address of a reflexive or relayed candidate (W3C `relatedAddress`).
    public var relatedAddress: String?
    /// The related port (W3C `relatedPort`).
    public var relatedPort: Int?
    /// For a relayed candidate of ours, how we reach the TURN server (W3C `relayProtocol`: `udp`).
    public var relayProtocol: String?

    /// The stats of `candidate`, ours (`local`) or the peer's.
    public init(_ candidate: ICECandidate, local: Bool) {
        type = local ? .localCandidate : .remoteCandidate
        id = Self.id(of: candidate)
        address = candidate.address.host
        port = Int(candidate.address.port)
        `protocol` = candidate.transport.rawValue
        candidateType = candidate.kind
        priority = candidate.priority
        foundation = candidate.foundation
        relatedAddress = candidate.relatedAddress?.host
        relatedPort = candidate.relatedAddress.map { Int($0.port) }
        relayProtocol = local && candidate.kind == .relay ? "udp" : nil
    }

    /// The stats id of `candidate`.
    public static func id(of candidate: ICECandidate) -> String {
        "I\(candidate.foundation)-\(candidate.address)"
    }
}
