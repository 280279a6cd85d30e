internal import CaptureRTP

/// What an SDP answer says about the simulcast streams it receives from a publisher that offered
/// `a=simulcast:send` (``PublishAnswer/simulcast``).
///
/// ## RFC 8853 and RFC 8851
/// - The answer's `a=simulcast:recv <list>` names the streams the answerer accepts: `;` separates streams, `,`
///   separates alternatives of one stream (every alternative counts as accepted here), and a rid written `~rid` is
///   accepted but paused: it is not to be sent until a later offer/answer resumes it (§5.1). An offered rid the
///   answer leaves out is rejected. A `send` list, which the answerer would use for its own streams, is checked for
///   syntax and otherwise ignored.
/// - Each rid in the list must have its own `a=rid:<rid> recv` line (RFC 8853 §5.1, RFC 8851): one missing is an
///   unknown rid (``PublishAnswerError/unknownRid(_:)``).
/// - An answer with `a=rid:<rid> recv` lines and no `a=simulcast` accepts those rids, none paused (RFC 8851 used
///   without simulcast).
///
/// Janus 1.1.2 answers with one `a=rid:<rid> recv` per offered rid in the offer's order and
/// `a=simulcast:recv h;m;l`, repeating the `~` of rids the offer paused.
///
/// ## Parsing
/// Everything the answerer wrote is input: a value that does not follow the grammar (an empty stream, a rid that is
/// not an RFC 8851 rid-id of at most 16 bytes, a repeated rid or direction, no `recv` list) is a
/// ``PublishAnswerError/malformedSimulcast(_:)``, never a crash.
public struct AnsweredSimulcast: Sendable, Hashable, Codable {
    /// The rids the answerer receives now, in the order the answer lists them (alternatives in their order).
    public var accepted: [String]
    /// The rids the answer lists paused (`~rid`), in its order: accepted, but not to be sent for now.
    public var paused: [String]

    /// Creates an answered simulcast description.
    public init(accepted: [String], paused: [String] = []) {
        self.accepted = accepted
        self.paused = paused
    }

    /// What becomes of each offered layer.
    public struct Outcome: Sendable, Hashable, Codable {
        /// The offered rids to send, in the offer's order (highest resolution first for a Janus offer).
        public var send: [String]
        /// The offered rids not to send, in the offer's order: paused, or left out of the answer.
        public var rejected: [String]

        /// Creates an outcome.
        public init(send: [String], rejected: [String]) {
            self.send = send
            self.rejected = rejected
        }
    }

    /// Splits the `offered` rids (as the offer listed them) into those to send and those rejected; throws
    /// ``PublishAnswerError/unknownRid(_:)`` when the answer accepts or pauses a rid that was not offered.
    public func outcome(offered: [String]) throws(PublishAnswerError) -> Outcome {
        if let unknown = (accepted + paused).first(where: { !offered.contains($0) }) { throw .unknownRid(unknown) }
        let send = offered.filter { accepted.contains($0) }
        return Outcome(send: send, rejected: offered.filter { !send.contains($0) })
    }

    /// Reads the video section's `a=simulcast` and `a=rid` attributes; `nil` when it has neither an `a=simulcast`
    /// nor an `a=rid:<rid> recv` line.
    static func parse(_ media: SessionDescription.Media) throws(PublishAnswerError) -> AnsweredSimulcast? {
        var receivedRids: [String] = []
        for value in media.attributeValues("rid") {
            let (rid, direction) = try parseRid(value)
            guard direction == "recv" else { continue }
            guard !receivedRids.contains(rid) else { throw .malformedRid(value) }
            receivedRids.append(rid)
        }
        let simulcastValues = media.attributeValues("simulcast")
        guard let value = simulcastValues.first else {
            return receivedRids.isEmpty ? nil : AnsweredSimulcast(accepted: receivedRids)
        }
        guard simulcastValues.count == 1 else { throw .malformedSimulcast(simulcastValues.joined(separator: " | ")) }
        let streams = try parseSimulcast(value)
        var accepted: [String] = []
        var paused: [String] = []
        for (rid, isPaused) in streams.joined() {
            guard receivedRids.contains(rid) else { throw .unknownRid(rid) }
            if isPaused { paused.append(rid) } else { accepted.append(rid) }
        }
        return AnsweredSimulcast(accepted: accepted, paused: paused)
    }

    /// An `a=rid` value, `<rid-id> <send|recv>[ <restrictions>]`: the rid and its direction.
    static func parseRid(_ value: String) throws(PublishAnswerError) -> (rid: String, direction: String) {
        let parts = value.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true).map(String.init)
        guard parts.count >= 2, RTPStreamIDExtension.isValid(parts[0]), parts[1] == "send" || parts[1] == "recv"
        else { throw .malformedRid(value) }
        return (parts[0], parts[1])
    }

    /// An `a=simulcast` value: the `recv` list's streams, each a list of (rid, paused) alternatives.
    static func parseSimulcast(_ value: String) throws(PublishAnswerError) -> [[(rid: String, paused: Bool)]] {
        let tokens = value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard tokens.count == 2 || tokens.count == 4 else { throw .malformedSimulcast(value) }
        var received: [[(rid: String, paused: Bool)]]?
        var directions: Set<String> = []
        for index in stride(from: 0, to: tokens.count, by: 2) {
            let direction = tokens[index]
            guard direction == "send" || direction == "recv", directions.insert(direction).inserted else {
                throw .malformedSimulcast(value)
            }
            // The draft form Firefox once used (`recv rid=h;m;l`) is read too.
            var list = Substring(tokens[index + 1])
            if list.hasPrefix("rid=") { list = list.dropFirst(4) }
            var seen: Set<String> = []
            var streams: [[(rid: String, paused: Bool)]] = []
            for stream in list.split(separator: ";", omittingEmptySubsequences: false) {
                var alternatives: [(rid: String, paused: Bool)] = []
                for alternative in stream.split(separator: ",", omittingEmptySubsequences: false) {
                    let paused = alternative.hasPrefix("~")
                    let rid = String(paused ? alternative.dropFirst() : alternative)
                    guard RTPStreamIDExtension.isValid(rid), seen.insert(rid).inserted else {
                        throw .malformedSimulcast(value)
                    }
                    alternatives.append((rid, paused))
                }
                streams.append(alternatives)
            }
            if direction == "recv" { received = streams }
        }
        guard let received else { throw .malformedSimulcast(value) }
        return received
    }
}
