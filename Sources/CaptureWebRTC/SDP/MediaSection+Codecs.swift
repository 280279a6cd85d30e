internal import CaptureRTP

/// One `a=rtpmap` of a media section: "<pt> <encoding>/<rate>[/<params>]".
struct RTPMap: Hashable {
    /// The payload type.
    var payloadType: UInt8
    /// Everything after the payload type ("VP8/90000").
    var encoding: String
    /// The encoding name, upper-cased ("VP8", "RTX").
    var name: String { encoding.split(separator: "/").first.map { $0.uppercased() } ?? "" }
}

extension SessionDescription.Media {
    /// The section's `a=rtpmap`s for payload types it lists in its formats, and the values that did not parse.
    func rtpMaps() -> (maps: [RTPMap], malformed: [String]) {
        var maps: [RTPMap] = []
        var malformed: [String] = []
        for value in attributeValues("rtpmap") {
            let parts = value.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2, let pt = UInt8(parts[0]), parts[1].split(separator: "/").first != nil else {
                malformed.append(value)
                continue
            }
            if formats.contains(parts[0]) { maps.append(RTPMap(payloadType: pt, encoding: parts[1])) }
        }
        return (maps, malformed)
    }

    /// The RTX payload type among `maps` whose `a=fmtp` says `apt=<payloadType>` (RFC 4588 §8.6), if any.
    func rtxPayloadType(for payloadType: UInt8, among maps: [RTPMap]) -> UInt8? {
        let rtx = Set(maps.filter { $0.name == "RTX" }.map(\.payloadType))
        for value in attributeValues("fmtp") {
            // "<pt> apt=<pt>[;…]"
            let parts = value.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2, let pt = UInt8(parts[0]), rtx.contains(pt) else { continue }
            let parameters = parts[1].split(separator: ";").map { String($0.filter { $0 != " " }) }
            if parameters.contains("apt=\(payloadType)") { return pt }
        }
        return nil
    }

    /// The section's `a=extmap` ids by URI ("<id>[/<direction>] <uri> [<attributes>]"), and the values that did not
    /// parse or carry id 0.
    func extensionMap() -> (ids: [String: UInt8], malformed: [String]) {
        var ids: [String: UInt8] = [:]
        var malformed: [String] = []
        for value in attributeValues("extmap") {
            let parts = value.split(separator: " ").map(String.init)
            guard parts.count >= 2, let id = parts[0].split(separator: "/").first.flatMap({ UInt8($0) }), id > 0 else {
                malformed.append(value)
                continue
            }
            ids[parts[1]] = id
        }
        return (ids, malformed)
    }
}

extension SessionDescription {
    /// The first value of attribute `name` in `media`, else at session level (an attribute without a value is "").
    func attributeValue(_ name: String, in media: Media) -> String? {
        media.attributeValues(name).first ?? attributes.first { $0.name == name }.map { $0.value ?? "" }
    }
}
