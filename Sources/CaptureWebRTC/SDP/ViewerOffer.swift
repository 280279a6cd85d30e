internal import CaptureRTP

/// A WHEP viewer's offer (a browser's `RTCPeerConnection` with a receive-only video transceiver), parsed for what the
/// preview's answer needs: ICE credentials and candidates, the DTLS fingerprint and setup, the VP8 and RTX payload
/// types, the mid, the header extension ids the browser offered, and whether it offered transport-wide congestion
/// control.
package struct ViewerOffer: Sendable, Hashable, Codable {
    /// The offer's ICE ufrag.
    package var iceUfrag: String
    /// The offer's ICE password.
    package var icePassword: String
    /// The `a=fingerprint` value ("sha-256 AB:…").
    package var fingerprint: String
    /// The offer's `a=setup` (`actpass` from browsers).
    package var setup: String
    /// The video section's mid.
    package var mid: String
    /// The VP8 payload type.
    package var payloadType: UInt8
    /// The RTX payload type whose `apt` is the VP8 one, if offered.
    package var rtxPayloadType: UInt8?
    /// Header extension ids by URI.
    package var extensionIDs: [String: UInt8]
    /// The id of the transport-wide sequence number extension when the browser offered both it and `transport-cc`
    /// in the VP8 `a=rtcp-fb` (Chromium and Firefox do): our packets to it then carry the number, and it sends
    /// transport-wide feedback. `nil` otherwise.
    package var transportWideCCExtensionID: UInt8?
    /// Candidate attribute values (mDNS `.local` ones included; the agent learns those peers from their checks).
    package var candidates: [String]

    /// Parses `text`; what is missing or wrong otherwise.
    package init(parsing text: String) throws(ViewerOfferError) {
        let description: SessionDescription
        do {
            description = try SessionDescription(parsing: text)
        } catch {
            throw .malformedSDP(error)
        }
        guard let video = description.media.first(where: { $0.media == "video" && $0.port != 0 }) else {
            throw .noVideoMedia
        }
        guard video.proto.contains("SAVPF") || video.proto.contains("SAVP") else {
            throw .notDTLSSRTP(video.proto)
        }
        if video.hasAttribute("sendonly") || video.hasAttribute("inactive") {
            throw .notReceiving
        }
        func value(_ name: String) -> String? { description.attributeValue(name, in: video) }
        guard let ufrag = value("ice-ufrag"), let password = value("ice-pwd"), !ufrag.isEmpty, !password.isEmpty
        else { throw .missingICECredentials }
        guard let fingerprint = value("fingerprint") else { throw .missingFingerprint }
        // Malformed rtpmap and extmap lines are skipped: a browser's offer lists many codecs and extensions we ignore.
        let maps = video.rtpMaps().maps
        guard let vp8 = maps.first(where: { $0.encoding.lowercased() == "vp8/90000" })?.payloadType else {
            throw .noVP8PayloadType
        }
        let extensions = video.extensionMap().ids.filter { (1...14).contains($0.value) }
        iceUfrag = ufrag
        icePassword = password
        self.fingerprint = fingerprint
        setup = value("setup") ?? "actpass"
        mid = video.attributeValues("mid").first ?? "0"
        payloadType = vp8
        rtxPayloadType = video.rtxPayloadType(for: vp8, among: maps)
        extensionIDs = extensions
        let vp8Name = String(vp8)
        let offersTransportCC = video.attributeValues("rtcp-fb").contains { value in
            let parts = value.split(separator: " ", maxSplits: 1)
            return parts.count == 2 && (parts[0] == vp8Name || parts[0] == "*") && parts[1] == "transport-cc"
        }
        transportWideCCExtensionID = offersTransportCC ? extensions[TransportSequenceNumberExtension.uri] : nil
        candidates = video.attributeValues("candidate")
    }
}
