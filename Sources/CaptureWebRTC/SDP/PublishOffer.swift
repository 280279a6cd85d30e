package import CaptureRTP

/// The SDP offer a WHIP publisher POSTs (RFC 9725 §4.2): one sendonly VP8 video section over
/// `UDP/TLS/RTP/SAVPF`, bundled, rtcp-mux only, with declared SSRCs (Janus drops RTP from SSRCs it cannot map) and,
/// unless ``rtx`` is `nil`, an RFC 4588 retransmission stream.
///
/// ICE credentials, the DTLS fingerprint and candidates are plain strings in their SDP form, so any ICE/DTLS
/// implementation can fill them in. ``render()`` writes CRLF line ends (simple-whip-server's regexes need them).
///
/// ## Simulcast
/// With ``simulcast`` the one track is sent as one RTP stream per `a=rid` (RFC 8851), each with its own SSRC and RTX
/// SSRC, declared the way Chrome declares `sendEncodings` with rids:
/// - the `sdes:rtp-stream-id` and `sdes:repaired-rtp-stream-id` extensions (RFC 8852) next to `sdes:mid`;
/// - `a=rid:<rid> send` per layer, then `a=simulcast:send <rid>;<rid>;…` (RFC 8853 §5.1: `;` separates streams,
///   `,` would separate alternatives of one stream, which this offer never has);
/// - no `a=ssrc` and no `a=ssrc-group:FID` lines: the receiver learns each layer's SSRC from the mid and rid
///   elements of its first packets and each RTX SSRC from repaired-rid (Janus does so only when it negotiated the
///   mid extension, so keep ``HeaderExtensionIDs/mid``). `a=msid` still names the track.
package struct PublishOffer: Sendable, Hashable, Codable {
    /// The RTP header extension URI of the media identification (`mid`) extension (RFC 8843).
    package static let midExtensionURI = "urn:ietf:params:rtp-hdrext:sdes:mid"
    /// The RTP header extension URI of coordination of video orientation (3GPP TS 26.114).
    package static let videoOrientationExtensionURI = "urn:3gpp:video-orientation"
    /// The RTP header extension URI of the transport-wide sequence number used by transport-cc feedback.
    package static let transportWideCCExtensionURI =
        "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"
    /// The RTCP feedback offered for VP8 by default, in this order.
    package static let defaultRTCPFeedback = ["goog-remb", "transport-cc", "ccm fir", "nack", "nack pli"]

    /// The RTP header extension ids to offer; `nil` leaves an extension out.
    package struct HeaderExtensionIDs: Sendable, Hashable, Codable {
        /// The id of `PublishOffer/midExtensionURI` (1 by default).
        package var mid: UInt8?
        /// The id of `PublishOffer/videoOrientationExtensionURI` (2 by default).
        package var videoOrientation: UInt8?
        /// The id of `PublishOffer/transportWideCCExtensionURI` (3 by default).
        package var transportWideCC: UInt8?
        /// The id of the RTP stream id extension (``RTPStreamIDExtension/uri``, 4 by default), offered only with
        /// ``PublishOffer/simulcast``.
        package var rid: UInt8?
        /// The id of the repaired RTP stream id extension (``RTPStreamIDExtension/repairedURI``, 5 by default),
        /// offered only with ``PublishOffer/simulcast``.
        package var repairedRid: UInt8?

        /// Creates the set of ids. The ids should differ from each other and lie in 1...14 (the RFC 8285 one-byte
        /// form the packetizer writes); the defaults do.
        package init(
            mid: UInt8? = 1, videoOrientation: UInt8? = 2, transportWideCC: UInt8? = 3, rid: UInt8? = 4,
            repairedRid: UInt8? = 5
        ) {
            self.mid = mid
            self.videoOrientation = videoOrientation
            self.transportWideCC = transportWideCC
            self.rid = rid
            self.repairedRid = repairedRid
        }
    }

    /// The simulcast layers of the video (RFC 8853): their rids, highest resolution first.
    ///
    /// The order is what Janus expects: with its default `rid_order` ("hml") the first `a=rid` is substream 2 (the
    /// highest), or substream 1 when there are two; Janus takes at most three rids, of at most 15 bytes each.
    package struct Simulcast: Sendable, Hashable, Codable {
        /// The layers' rids (RFC 8851 rid-ids, ``RTPStreamIDExtension/isValid(_:)``), highest resolution first.
        package private(set) var rids: [String]

        /// The layers `rids`, highest resolution first; `nil` when there are none, one is not a valid rid-id, or
        /// one repeats.
        package init?(rids: [String]) {
            guard !rids.isEmpty, rids.allSatisfy(RTPStreamIDExtension.isValid), Set(rids).count == rids.count
            else { return nil }
            self.rids = rids
        }

        /// Decodes the layers, checked as ``init(rids:)`` checks them.
        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let rids = try container.decode([String].self, forKey: .rids)
            guard let valid = Simulcast(rids: rids) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .rids, in: container, debugDescription: "not 1 or more distinct RFC 8851 rid-ids: \(rids)")
            }
            self = valid
        }
    }

    /// The RFC 4588 retransmission stream: its payload type and SSRC.
    package struct Retransmission: Sendable, Hashable, Codable {
        /// The RTX payload type (97 by default), associated with the VP8 one by `a=fmtp:<pt> apt=<vp8>`.
        package var payloadType: UInt8
        /// The RTX SSRC, paired with the media SSRC by `a=ssrc-group:FID`.
        package var ssrc: UInt32

        /// Creates the retransmission parameters.
        package init(payloadType: UInt8 = 97, ssrc: UInt32) {
            self.payloadType = payloadType
            self.ssrc = ssrc
        }
    }

    /// Our ICE username fragment (`a=ice-ufrag`).
    package var iceUfrag: String
    /// Our ICE password (`a=ice-pwd`).
    package var icePassword: String
    /// Our certificate's fingerprint as `a=fingerprint` carries it: `"sha-256 AB:CD:…"`.
    package var fingerprint: String
    /// The MediaStream id (`a=msid-semantic`, `a=msid`, `a=ssrc:… msid:`).
    package var streamID: String
    /// The MediaStreamTrack id.
    package var trackID: String
    /// The RTCP CNAME (`a=ssrc:<ssrc> cname:`).
    package var cname: String
    /// The media SSRC.
    package var ssrc: UInt32
    /// The VP8 payload type (96 by default).
    package var payloadType: UInt8
    /// The retransmission stream, or `nil` to offer no RTX (no rtx payload type, no FID group).
    package var rtx: Retransmission?
    /// The media identification (`a=mid`, `a=group:BUNDLE`), `"0"` by default.
    package var mid: String
    /// The RTP header extensions and their ids.
    package var extensionIDs: HeaderExtensionIDs
    /// The `a=rtcp-fb` values for the VP8 payload type.
    package var rtcpFeedback: [String]
    /// Candidate attribute values known at offer time (`"1 1 udp 2130706431 10.0.0.1 5000 typ host"`); when not
    /// empty they are written with `a=end-of-candidates` (non-trickle) unless ``endOfCandidates`` is false. Empty:
    /// candidates are trickled later.
    package var candidates: [String]
    /// Whether non-empty ``candidates`` end with `a=end-of-candidates` (the default); false when more may be trickled
    /// after the offer (RFC 8838: none may follow an end-of-candidates), which then ends with a PATCH.
    package var endOfCandidates: Bool
    /// The nominal frame rate (`a=framerate`), or `nil`.
    package var framerate: Double?
    /// The `o=` session id.
    package var sessionID: UInt64
    /// The simulcast layers, or `nil` (the default) for one stream with the declared ``ssrc`` (and the RTX SSRC).
    /// With layers, ``ssrc`` and ``Retransmission/ssrc`` are not written: see the type's notes.
    package var simulcast: Simulcast?

    /// Creates an offer configuration.
    package init(
        iceUfrag: String, icePassword: String, fingerprint: String, streamID: String, trackID: String,
        cname: String, ssrc: UInt32, payloadType: UInt8 = 96, rtx: Retransmission?, mid: String = "0",
        extensionIDs: HeaderExtensionIDs = HeaderExtensionIDs(),
        rtcpFeedback: [String] = PublishOffer.defaultRTCPFeedback, candidates: [String] = [],
        framerate: Double? = nil, sessionID: UInt64 = 0, endOfCandidates: Bool = true, simulcast: Simulcast? = nil
    ) {
        self.simulcast = simulcast
        self.endOfCandidates = endOfCandidates
        self.iceUfrag = iceUfrag
        self.icePassword = icePassword
        self.fingerprint = fingerprint
        self.streamID = streamID
        self.trackID = trackID
        self.cname = cname
        self.ssrc = ssrc
        self.payloadType = payloadType
        self.rtx = rtx
        self.mid = mid
        self.extensionIDs = extensionIDs
        self.rtcpFeedback = rtcpFeedback
        self.candidates = candidates
        self.framerate = framerate
        self.sessionID = sessionID
    }

    /// The offer as a session description.
    package func makeDescription() -> SessionDescription {
        typealias Attribute = SessionDescription.Attribute
        let pt = String(payloadType)
        var formats = [pt]
        if let rtx { formats.append(String(rtx.payloadType)) }
        var attributes: [Attribute] = [
            Attribute("rtcp", "9 IN IP4 0.0.0.0"),
            Attribute("ice-ufrag", iceUfrag),
            Attribute("ice-pwd", icePassword),
            Attribute("fingerprint", fingerprint),
            Attribute("setup", "actpass"),
            Attribute("mid", mid),
        ]
        let extensions: [(UInt8?, String)] = [
            (extensionIDs.mid, Self.midExtensionURI),
            (extensionIDs.videoOrientation, Self.videoOrientationExtensionURI),
            (extensionIDs.transportWideCC, Self.transportWideCCExtensionURI),
        ]
        for case (let id?, let uri) in extensions { attributes.append(Attribute("extmap", "\(id) \(uri)")) }
        if simulcast != nil {
            let streamIDs: [(UInt8?, String)] = [
                (extensionIDs.rid, RTPStreamIDExtension.uri),
                (extensionIDs.repairedRid, RTPStreamIDExtension.repairedURI),
            ]
            for case (let id?, let uri) in streamIDs { attributes.append(Attribute("extmap", "\(id) \(uri)")) }
        }
        attributes += [
            Attribute("sendonly"),
            Attribute("msid", "\(streamID) \(trackID)"),
            Attribute("rtcp-mux"),
            Attribute("rtcp-mux-only"),
            Attribute("rtcp-rsize"),
            Attribute("rtpmap", "\(pt) VP8/90000"),
        ]
        attributes += rtcpFeedback.map { Attribute("rtcp-fb", "\(pt) \($0)") }
        if let rtx {
            attributes.append(Attribute("rtpmap", "\(rtx.payloadType) rtx/90000"))
            attributes.append(Attribute("fmtp", "\(rtx.payloadType) apt=\(pt)"))
            if simulcast == nil { attributes.append(Attribute("ssrc-group", "FID \(ssrc) \(rtx.ssrc)")) }
        }
        if simulcast == nil {
            for source in [ssrc] + (rtx.map { [$0.ssrc] } ?? []) {
                attributes.append(Attribute("ssrc", "\(source) cname:\(cname)"))
                attributes.append(Attribute("ssrc", "\(source) msid:\(streamID) \(trackID)"))
            }
        }
        if let framerate { attributes.append(Attribute("framerate", Self.format(framerate))) }
        if let simulcast {
            attributes += simulcast.rids.map { Attribute("rid", "\($0) send") }
            attributes.append(Attribute("simulcast", "send " + simulcast.rids.joined(separator: ";")))
        }
        if !candidates.isEmpty {
            attributes += candidates.map { Attribute("candidate", Self.candidateValue($0)) }
            if endOfCandidates { attributes.append(Attribute("end-of-candidates")) }
        }
        let media = SessionDescription.Media(
            media: "video", port: 9, proto: "UDP/TLS/RTP/SAVPF", formats: formats,
            connection: SessionDescription.Connection(addressType: "IP4", address: "0.0.0.0"),
            attributes: attributes)
        return SessionDescription(
            origin: SessionDescription.Origin(
                sessionID: sessionID, sessionVersion: 2, addressType: "IP4", address: "127.0.0.1"),
            sessionName: "-",
            attributes: [
                Attribute("group", "BUNDLE \(mid)"),
                Attribute("extmap-allow-mixed"),
                Attribute("msid-semantic", " WMS \(streamID)"),
                Attribute("ice-options", "trickle"),
            ],
            media: [media])
    }

    /// The offer as SDP text with CRLF line ends, ready to POST as `application/sdp`.
    package func render() -> String { makeDescription().render() }

    /// A candidate attribute value without a leading `candidate:` (both spellings are accepted).
    static func candidateValue(_ candidate: String) -> String {
        let prefixes = ["a=candidate:", "candidate:"]
        for prefix in prefixes where candidate.hasPrefix(prefix) { return String(candidate.dropFirst(prefix.count)) }
        return candidate
    }

    /// A frame rate without a needless ".0".
    private static func format(_ rate: Double) -> String {
        rate == rate.rounded() && abs(rate) < 1e9 ? String(Int(rate)) : String(rate)
    }
}
