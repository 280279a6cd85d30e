/// The parameters of one VP8 video stream over RTP, as an SDP offer or a received `.sdp` file describes them.
///
/// ``makeDescription()`` writes SDP that ffmpeg (`-protocol_whitelist file,udp,rtp -i x.sdp`), GStreamer and VLC
/// open as is; ``init(description:)`` reads what ffmpeg's `-sdp_file` and GStreamer-style SDPs contain.
public struct VideoSessionParameters: Sendable, Hashable, Codable {
    /// The URI of the coordination-of-video-orientation RTP header extension (3GPP TS 26.114).
    public static let videoOrientationURI = "urn:3gpp:video-orientation"
    /// The RTCP feedback a WebRTC-style VP8 receiver understands.
    public static let defaultRTCPFeedback = ["nack", "nack pli", "ccm fir", "goog-remb"]

    /// The destination (receiver) address, IPv4 or IPv6.
    public var address: String
    /// The RTP port.
    public var port: UInt16
    /// The RTCP port when it is not `port + 1` (`a=rtcp:`), or `nil`.
    public var rtcpPort: UInt16?
    /// Whether RTP and RTCP share the RTP port (`a=rtcp-mux`).
    public var rtcpMux: Bool
    /// The RTP payload type (dynamic range, 96 by default).
    public var payloadType: UInt8
    /// The codec's encoding name (`VP8`).
    public var codecName: String
    /// The RTP clock rate (90000 for video).
    public var clockRate: UInt32
    /// The nominal frame rate (`a=framerate:`), or `nil`.
    public var framerate: Double?
    /// The `a=rtcp-fb` values for the payload type.
    public var rtcpFeedback: [String]
    /// The RTP header extension id of the video orientation extension, or `nil` when not used.
    public var videoOrientationExtensionID: UInt8?
    /// The RTP header extension id of the transport-wide sequence number (``TransportSequenceNumberExtension``), or
    /// `nil`: written as its `a=extmap` with `transport-cc` in the `a=rtcp-fb`, and read back only when both are
    /// there (either alone does not turn transport-wide congestion control on).
    public var transportWideCCExtensionID: UInt8?
    /// SDES keying (RFC 4568): when set the profile is `RTP/SAVP` with an `a=crypto` line.
    public var crypto: SRTPKeyingMaterial?
    /// The media SSRC (`a=ssrc:`), or `nil`.
    public var ssrc: UInt32?
    /// The CNAME for `a=ssrc:<ssrc> cname:`, or `nil`.
    public var cname: String?
    /// The `s=` session name.
    public var sessionName: String

    /// Creates parameters.
    public init(
        address: String, port: UInt16, rtcpPort: UInt16? = nil, rtcpMux: Bool = false, payloadType: UInt8 = 96,
        codecName: String = "VP8", clockRate: UInt32 = 90000, framerate: Double? = nil,
        rtcpFeedback: [String] = VideoSessionParameters.defaultRTCPFeedback, videoOrientationExtensionID: UInt8? = nil,
        transportWideCCExtensionID: UInt8? = nil, crypto: SRTPKeyingMaterial? = nil, ssrc: UInt32? = nil,
        cname: String? = nil, sessionName: String = "swift-camera-capture"
    ) {
        self.address = address
        self.port = port
        self.rtcpPort = rtcpPort
        self.rtcpMux = rtcpMux
        self.payloadType = payloadType
        self.codecName = codecName
        self.clockRate = clockRate
        self.framerate = framerate
        self.rtcpFeedback = rtcpFeedback
        self.videoOrientationExtensionID = videoOrientationExtensionID
        self.transportWideCCExtensionID = transportWideCCExtensionID
        self.crypto = crypto
        self.ssrc = ssrc
        self.cname = cname
        self.sessionName = sessionName
    }

    /// The SRTP profile of ``crypto``, if any.
    public var srtpProfile: SRTPProfile? { crypto?.profile }

    /// The session description.
    public func makeDescription() -> SessionDescription {
        let connection = SessionDescription.Connection(address: address)
        let pt = String(payloadType)
        var attributes: [SessionDescription.Attribute] = [.init("rtpmap", "\(pt) \(codecName)/\(clockRate)")]
        if let framerate { attributes.append(.init("framerate", Self.format(framerate))) }
        if let rtcpPort { attributes.append(.init("rtcp", "\(rtcpPort)")) }
        if rtcpMux { attributes.append(.init("rtcp-mux")) }
        var feedback = rtcpFeedback
        if transportWideCCExtensionID != nil, !feedback.contains("transport-cc") { feedback.append("transport-cc") }
        attributes += feedback.map { .init("rtcp-fb", "\(pt) \($0)") }
        if let id = videoOrientationExtensionID {
            attributes.append(.init("extmap", "\(id) \(Self.videoOrientationURI)"))
        }
        if let id = transportWideCCExtensionID {
            attributes.append(.init("extmap", "\(id) \(TransportSequenceNumberExtension.uri)"))
        }
        if let crypto {
            attributes.append(.init("crypto", "1 \(crypto.profile.sdesName) inline:\(crypto.base64)"))
        }
        if let ssrc, let cname { attributes.append(.init("ssrc", "\(ssrc) cname:\(cname)")) }
        let media = SessionDescription.Media(
            media: "video", port: port, proto: crypto == nil ? "RTP/AVP" : "RTP/SAVP", formats: [pt],
            attributes: attributes)
        return SessionDescription(
            origin: .init(sessionID: UInt64(ssrc ?? 0), addressType: connection.addressType, address: address),
            sessionName: sessionName, connection: connection, media: [media])
    }

    /// Reads the first `m=video` section of `description` and its VP8 payload type.
    public init(description: SessionDescription) throws(SDPParseError) {
        func fail(_ reason: SDPParseError.Reason) -> SDPParseError {
            SDPParseError(lineNumber: nil, line: "", reason: reason)
        }
        guard let media = description.media.first(where: { $0.media == "video" }) else { throw fail(.noVideoMedia) }
        var found: (UInt8, String, UInt32)?
        for value in media.attributeValues("rtpmap") {
            // "<pt> <name>/<rate>[/<params>]"
            let parts = value.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2, let pt = UInt8(parts[0]) else { throw fail(.malformedAttribute("rtpmap:\(value)")) }
            let codec = parts[1].split(separator: "/").map(String.init)
            guard codec.count >= 2, let rate = UInt32(codec[1]) else {
                throw fail(.malformedAttribute("rtpmap:\(value)"))
            }
            if codec[0].uppercased() == "VP8", media.formats.contains(parts[0]) {
                found = (pt, codec[0], rate)
                break
            }
        }
        guard let (payloadType, codecName, clockRate) = found else { throw fail(.noVP8PayloadType) }
        guard let connection = media.connection ?? description.connection else { throw fail(.missingConnection) }
        // Strip a multicast "/ttl[/count]" suffix (IPv4) or "/count" (IPv6).
        let address = String(connection.address.split(separator: "/").first ?? "")

        var rtcpPort: UInt16?
        if let value = media.attributeValues("rtcp").first {
            guard let number = value.split(separator: " ").first.flatMap({ UInt16($0) }) else {
                throw fail(.malformedAttribute("rtcp:\(value)"))
            }
            rtcpPort = number
        }
        var framerate: Double?
        if let value = (media.attributeValues("framerate") + media.attributeValues("x-framerate")).first {
            guard let rate = Double(value), rate > 0, rate.isFinite else {
                throw fail(.malformedAttribute("framerate:\(value)"))
            }
            framerate = rate
        }
        let pt = String(payloadType)
        let feedback = media.attributeValues("rtcp-fb").compactMap { value -> String? in
            let parts = value.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2, parts[0] == pt || parts[0] == "*" else { return nil }
            return parts[1]
        }
        var orientationID: UInt8?
        var transportWideID: UInt8?
        for value in media.attributeValues("extmap") {
            let parts = value.split(separator: " ").map(String.init)
            if parts.count >= 2,
                parts[1] == Self.videoOrientationURI || parts[1] == TransportSequenceNumberExtension.uri
            {
                // "<id>[/<direction>] <uri>"
                guard let id = parts[0].split(separator: "/").first.flatMap({ UInt8($0) }) else {
                    throw fail(.malformedAttribute("extmap:\(value)"))
                }
                if parts[1] == Self.videoOrientationURI { orientationID = id } else { transportWideID = id }
            }
        }
        if !feedback.contains("transport-cc") { transportWideID = nil }
        var crypto: SRTPKeyingMaterial?
        if let value = media.attributeValues("crypto").first {
            crypto = try Self.parseCrypto(value)
        }
        var ssrc: UInt32?
        var cname: String?
        for value in media.attributeValues("ssrc") {
            let parts = value.split(separator: " ", maxSplits: 1).map(String.init)
            guard let number = parts.first.flatMap({ UInt32($0) }) else {
                throw fail(.malformedAttribute("ssrc:\(value)"))
            }
            ssrc = ssrc ?? number
            if parts.count == 2, parts[1].hasPrefix("cname:"), number == ssrc {
                cname = String(parts[1].dropFirst("cname:".count))
            }
        }
        self.init(
            address: address, port: media.port, rtcpPort: rtcpPort, rtcpMux: media.hasAttribute("rtcp-mux"),
            payloadType: payloadType, codecName: codecName, clockRate: clockRate, framerate: framerate,
            rtcpFeedback: feedback, videoOrientationExtensionID: orientationID,
            transportWideCCExtensionID: transportWideID, crypto: crypto, ssrc: ssrc,
            cname: cname, sessionName: description.sessionName)
    }

    /// Parses `1 AES_CM_128_HMAC_SHA1_80 inline:<base64>[|lifetime][|MKI:length] [session params]`.
    private static func parseCrypto(_ value: String) throws(SDPParseError) -> SRTPKeyingMaterial {
        let malformed = SDPParseError(lineNumber: nil, line: "", reason: .malformedAttribute("crypto:\(value)"))
        let fields = value.split(separator: " ").map(String.init)
        guard fields.count >= 3, UInt32(fields[0]) != nil, fields[2].hasPrefix("inline:") else { throw malformed }
        guard let profile = SRTPProfile(sdesName: fields[1]) else {
            throw SDPParseError(lineNumber: nil, line: "", reason: .unsupportedCryptoSuite(fields[1]))
        }
        let key = String(fields[2].dropFirst("inline:".count).split(separator: "|").first ?? "")
        guard let material = try? SRTPKeyingMaterial(base64: key), material.profile == profile else { throw malformed }
        return material
    }

    /// A frame rate without a needless ".0".
    private static func format(_ rate: Double) -> String {
        rate == rate.rounded() && rate < 1e9 ? String(Int(rate)) : String(rate)
    }
}
