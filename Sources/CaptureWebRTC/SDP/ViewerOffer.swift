import CaptureRTP
import Foundation

/// A WHEP viewer's offer (a browser's `RTCPeerConnection` with a receive-only video transceiver), parsed for what the
/// preview's answer needs: ICE credentials and candidates, the DTLS fingerprint and setup, the VP8 and RTX payload
/// types, the mid and the header extension ids the browser offered.
public struct ViewerOffer: Sendable, Hashable, Codable {
    /// The offer's ICE ufrag.
    public var iceUfrag: String
    /// The offer's ICE password.
    public var icePassword: String
    /// The `a=fingerprint` value ("sha-256 AB:…").
    public var fingerprint: String
    /// The offer's `a=setup` (`actpass` from browsers).
    public var setup: String
    /// The video section's mid.
    public var mid: String
    /// The VP8 payload type.
    public var payloadType: UInt8
    /// The RTX payload type whose `apt` is the VP8 one, if offered.
    public var rtxPayloadType: UInt8?
    /// Header extension ids by URI.
    public var extensionIDs: [String: UInt8]
    /// Candidate attribute values (mDNS `.local` ones included; the agent learns those peers from their checks).
    public var candidates: [String]

    /// Parses `text`; a description of what is missing or wrong otherwise.
    public init(parsing text: String) throws(WHEPRequestError) {
        let description: SessionDescription
        do {
            description = try SessionDescription(parsing: text)
        } catch {
            throw .badRequest("the offer is not SDP: \(error)")
        }
        guard let video = description.media.first(where: { $0.media == "video" && $0.port != 0 }) else {
            throw .badRequest("the offer has no video section")
        }
        guard video.proto.contains("SAVPF") || video.proto.contains("SAVP") else {
            throw .badRequest("the video section's protocol \(video.proto) is not DTLS-SRTP")
        }
        if video.hasAttribute("sendonly") || video.hasAttribute("inactive") {
            throw .badRequest("the video section does not receive (sendonly or inactive)")
        }
        func value(_ name: String) -> String? {
            video.attributeValues(name).first ?? description.attributes.first { $0.name == name }?.value
        }
        guard let ufrag = value("ice-ufrag"), let password = value("ice-pwd"), !ufrag.isEmpty, !password.isEmpty
        else { throw .badRequest("the offer has no ICE ufrag or password") }
        guard let fingerprint = value("fingerprint") else { throw .badRequest("the offer has no a=fingerprint") }
        var vp8: UInt8?
        var rtxByApt: [UInt8: UInt8] = [:]
        var rtxTypes: Set<UInt8> = []
        for map in video.attributeValues("rtpmap") {
            let parts = map.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, let pt = UInt8(parts[0]), video.formats.contains(String(pt)) else { continue }
            let codec = parts[1].lowercased()
            if codec == "vp8/90000", vp8 == nil { vp8 = pt }
            if codec == "rtx/90000" { rtxTypes.insert(pt) }
        }
        for fmtp in video.attributeValues("fmtp") {
            let parts = fmtp.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, let pt = UInt8(parts[0]), rtxTypes.contains(pt) else { continue }
            for parameter in parts[1].split(separator: ";") {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                let name = pair.first.map { String($0).trimmingCharacters(in: .whitespaces) }
                if pair.count == 2, name == "apt", let apt = UInt8(String(pair[1]).trimmingCharacters(in: .whitespaces))
                {
                    rtxByApt[apt] = pt
                }
            }
        }
        guard let vp8 else { throw .badRequest("the offer does not receive VP8") }
        var extensions: [String: UInt8] = [:]
        for map in video.attributeValues("extmap") {
            let parts = map.split(separator: " ")
            guard parts.count >= 2, let id = UInt8(parts[0].split(separator: "/")[0]), (1...14).contains(id) else {
                continue
            }
            extensions[String(parts[1])] = id
        }
        iceUfrag = ufrag
        icePassword = password
        self.fingerprint = fingerprint
        setup = value("setup") ?? "actpass"
        mid = video.attributeValues("mid").first ?? "0"
        payloadType = vp8
        rtxPayloadType = rtxByApt[vp8]
        extensionIDs = extensions
        candidates = video.attributeValues("candidate")
    }
}
