/// A local and a remote candidate checked together (RFC 8445 §6.1.2), with the state of its checks.
public struct ICECandidatePair: Sendable, Hashable, Codable, CustomStringConvertible {
    /// A pair's check state (RFC 8445 §6.1.2.6). This agent runs one data stream, so no pair is ever frozen.
    public enum State: String, Sendable, Hashable, Codable {
        /// Not checked yet.
        case waiting
        /// A check is outstanding.
        case inProgress
        /// A check succeeded.
        case succeeded
        /// Checks failed (timeout, error response or a response from another address).
        case failed
    }

    /// The local candidate: a host candidate (reflexive ones share its base and socket) or a relayed one.
    public var local: ICECandidate
    /// The remote candidate.
    public var remote: ICECandidate
    /// The check state.
    public var state: State
    /// Whether the pair is nominated (USE-CANDIDATE sent by the controlling agent, or received by the controlled one).
    public var nominated: Bool

    /// A new pair, waiting, not nominated.
    public init(local: ICECandidate, remote: ICECandidate) {
        self.local = local
        self.remote = remote
        self.state = .waiting
        self.nominated = false
    }

    /// The pair priority for an agent in `role` (RFC 8445 §6.1.2.3).
    public func priority(role: ICERole) -> UInt64 {
        switch role {
        case .controlling: Self.priority(controlling: local.priority, controlled: remote.priority)
        case .controlled: Self.priority(controlling: remote.priority, controlled: local.priority)
        }
    }

    /// 2³²·min(G, D) + 2·max(G, D) + (G > D ? 1 : 0), G the controlling agent's candidate priority, D the controlled.
    public static func priority(controlling: UInt32, controlled: UInt32) -> UInt64 {
        let g = UInt64(controlling)
        let d = UInt64(controlled)
        return (min(g, d) << 32) + 2 * max(g, d) + (g > d ? 1 : 0)
    }

    /// The local and remote candidate types, e.g. `"relay → host"`.
    public var candidateTypes: String { "\(local.kind.rawValue) → \(remote.kind.rawValue)" }

    /// `"local -> remote (state)"`.
    public var description: String {
        "\(local.address) (\(local.kind.rawValue)) -> \(remote.address) (\(remote.kind.rawValue)) \(state.rawValue)"
            + (nominated ? " nominated" : "")
    }
}
