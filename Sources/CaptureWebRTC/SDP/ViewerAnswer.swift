package import CaptureDTLS
package import CaptureICE
internal import CaptureRTP

/// The preview's answer to a `ViewerOffer`: a send-only VP8 section built like the publisher's offer
/// (`PublishOffer`: declared SSRCs, RTX, the feedback we act on), then made an answer: our DTLS `setup`, only the
/// header extensions the viewer offered, with its ids (the transport-wide sequence number only when it offered
/// `transport-cc` too, which the answer then lists in `a=rtcp-fb`), and no offer-only attributes.
///
/// `package`: CapturePreview's session renders it; it is not API.
package struct ViewerAnswer {
    let offer: ViewerOffer
    let iceCredentials: ICECredentials
    let fingerprint: DTLSFingerprint
    let setup: String
    let ssrc: UInt32
    let rtxSSRC: UInt32
    let cname: String
    let candidates: [String]

    /// An answer to `offer` with our ICE credentials, certificate fingerprint, DTLS `setup` (`active` or `passive`),
    /// the video and RTX SSRCs, the RTCP CNAME and our candidates' attribute values.
    package init(
        offer: ViewerOffer, iceCredentials: ICECredentials, fingerprint: DTLSFingerprint, setup: String, ssrc: UInt32,
        rtxSSRC: UInt32, cname: String, candidates: [String]
    ) {
        self.offer = offer
        self.iceCredentials = iceCredentials
        self.fingerprint = fingerprint
        self.setup = setup
        self.ssrc = ssrc
        self.rtxSSRC = rtxSSRC
        self.cname = cname
        self.candidates = candidates
    }

    /// The answer as SDP text (CRLF line ends).
    package func render() -> String {
        let publish = PublishOffer(
            iceUfrag: iceCredentials.ufrag, icePassword: iceCredentials.password, fingerprint: fingerprint.sdpValue,
            streamID: "capturer-preview", trackID: "camera", cname: cname, ssrc: ssrc,
            payloadType: offer.payloadType,
            rtx: offer.rtxPayloadType.map { PublishOffer.Retransmission(payloadType: $0, ssrc: rtxSSRC) },
            mid: offer.mid,
            extensionIDs: PublishOffer.HeaderExtensionIDs(
                mid: offer.extensionIDs[PublishOffer.midExtensionURI],
                videoOrientation: offer.extensionIDs[PublishOffer.videoOrientationExtensionURI],
                transportWideCC: offer.transportWideCCExtensionID),
            rtcpFeedback: ["goog-remb"] + (offer.transportWideCCExtensionID == nil ? [] : ["transport-cc"])
                + ["ccm fir", "nack", "nack pli"],
            candidates: candidates)
        var description = publish.makeDescription()
        description.attributes.removeAll { $0.name == "ice-options" }
        for index in description.media.indices {
            description.media[index].attributes.removeAll { $0.name == "rtcp-mux-only" }
            for attribute in description.media[index].attributes.indices
            where description.media[index].attributes[attribute].name == "setup" {
                description.media[index].attributes[attribute].value = setup
            }
        }
        return description.render()
    }
}
