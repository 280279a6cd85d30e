internal import CaptureCore
internal import CaptureICE
internal import CaptureRTP
import Foundation
import Logging

/// Trickle ICE after the offer (RFC 9725 §4.3.1, RFC 8838, RFC 8840): the STUN and TURN servers the endpoint announced
/// in its 201's `Link: <…>; rel="ice-server"` headers are added to the transport, and every candidate gathered after
/// the offer (theirs, and any of the user's servers that answered after the gathering timeout) is PATCHed to the
/// resource as it comes, one candidate per PATCH, then `a=end-of-candidates` once gathering is over. ICE goes on with
/// the offer's candidates meanwhile: nothing here delays publishing. A resource that refuses the PATCH as unsupported
/// (405, 501: it does not do trickle) is logged and counted, and nothing more is PATCHed; a relay candidate is used
/// for checks all the same (the peer learns it as peer-reflexive).
extension WHIPPublisher {
    /// The servers of `announced` the user has not configured already (same URL, username and credential), without
    /// repeats.
    static func newLinkServers(_ announced: [ICEServer], configured: [ICEServer]) -> [ICEServer] {
        var result: [ICEServer] = []
        for server in announced {
            let known = (configured + result).contains {
                $0.url.lowercased() == server.url.lowercased() && $0.username == server.username
                    && $0.credential == server.credential
            }
            if !known { result.append(server) }
        }
        return result
    }

    /// Adds the endpoint's `Link` servers to `transport` and trickles what gathering gives after `offered`, then
    /// end-of-candidates; returns when gathering is over, trickle was refused, the transport closed, or on
    /// cancellation.
    func trickle(_ whip: WHIPSession, transport: WebRTCTransport, offered: [ICECandidate]) async {
        let linkServers = Self.newLinkServers(whip.iceServers, configured: configuration.iceServers)
        state.withLock { $0.trickle.linkICEServers = linkServers.map(\.url) }
        if !linkServers.isEmpty {
            logger.info(
                "ICE servers from the endpoint's Link headers",
                metadata: ["servers": "\(linkServers.map(\.url).joined(separator: " "))"])
        }
        // getaddrinfo blocks (seconds, for a name whose DNS does not answer): on the blocking executor, not the pool.
        let (stun, turn) = await BlockingExecutor.shared.run { [self] in
            (stunServers(from: linkServers), turnServers(from: linkServers))
        }
        let events = transport.addICEServers(stun: stun, turn: turn)
        if !stun.isEmpty || !turn.isEmpty {
            logger.info(
                "gathering from the endpoint's ICE servers", metadata: ["servers": "\(stun.count + turn.count)"])
        }
        var trickled = Set(offered.map(\.sdpAttributeValue))
        let mid = whip.answer.mid ?? "0"
        func fragment(_ candidates: [ICECandidate], end: Bool = false) -> TrickleFragment {
            TrickleFragment(
                iceUfrag: transport.localCredentials.ufrag, icePassword: transport.localCredentials.password, mid: mid,
                candidates: candidates.map(\.sdpAttributeValue), endOfCandidates: end)
        }
        // Candidates gathered between the offer and now, then each new one as it comes.
        for candidate in transport.localCandidates where !trickled.contains(candidate.sdpAttributeValue) {
            trickled.insert(candidate.sdpAttributeValue)
            guard await patch(fragment([candidate]), whip) else { return }
        }
        var complete = false
        for await event in events {
            switch event {
            case .localCandidate(let candidate):
                guard !trickled.contains(candidate.sdpAttributeValue) else { continue }
                trickled.insert(candidate.sdpAttributeValue)
                guard await patch(fragment([candidate]), whip) else { return }
            case .gatheringComplete:
                complete = true
            case .relayFailed, .stateChanged, .selectedPair, .roleChanged:
                break
            }
        }
        guard complete, !Task.isCancelled else { return }
        _ = await patch(fragment([], end: true), whip)
    }

    /// PATCHes one fragment and counts the outcome; returns whether trickle may go on (false once the resource
    /// refused it as unsupported, or on cancellation).
    private func patch(_ fragment: TrickleFragment, _ whip: WHIPSession) async -> Bool {
        guard !Task.isCancelled else { return false }
        do throws(WHIPError) {
            try await client.trickle(fragment, session: whip)
            state.withLock { state in
                state.trickle.patchesAccepted += 1
                state.trickle.candidatesTrickled += fragment.candidates.count
                if fragment.endOfCandidates { state.trickle.endOfCandidatesSent = true }
            }
            logger.debug(
                "trickled", metadata: ["candidates": "\(fragment.candidates)", "end": "\(fragment.endOfCandidates)"])
            return true
        } catch {
            if case .httpStatus(_, let status, _) = error, status == 405 || status == 501 {
                state.withLock { $0.trickle.patchesRefused += 1 }
                logger.warning(
                    "the WHIP resource does not take trickle ICE; the offer's candidates stay the only ones signalled",
                    metadata: ["status": "\(status)", "resource": "\(whip.resourceURL)"])
                return false
            }
            state.withLock { $0.trickle.patchesFailed += 1 }
            logger.warning("a trickle PATCH failed", metadata: ["error": "\(error)"])
            return !Task.isCancelled
        }
    }
}
