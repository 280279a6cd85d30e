public import CaptureDTLS
public import CaptureICE
public import CaptureCall

/// Something a ``WebRTCConnection`` reports through ``WebRTCConnection/pollEvent()``, oldest first.
public enum ConnectionEvent: Sendable, Hashable {
    /// A local candidate was gathered (server-reflexive or relayed): signal it to the peer (trickle).
    case localCandidate(ICECandidate)
    /// A TURN server gave no relayed candidate.
    case relayFailed(TURNError)
    /// Every STUN and TURN server answered or gave up: no more local candidates.
    case gatheringComplete
    /// ICE's state changed.
    case iceStateChanged(ICEState)
    /// ICE selected the pair media uses (or changed it).
    case selectedPair(ICECandidatePair)
    /// DTLS is connected: the SRTP keys are agreed and media may flow.
    case connected(DTLSSRTPKeys)
    /// ICE or DTLS failed, or consent was lost: the connection is over.
    case failed(WebRTCTransportError)
    /// The connection was closed by its owner.
    case closed
    /// The peer asked for a key frame (PLI or FIR, at most one per 300 ms per stream is passed on) of the stream of
    /// simulcast layer `simulcastIndex` (0 without simulcast; see ``ConnectionMedia/simulcastLayers``).
    case keyFrameRequested(KeyFrameRequestReason, simulcastIndex: Int)
    /// The rate the encoder should run at changed (REMB, TMMBR, or the loss-based estimate under them).
    case targetBitrateChanged(kbps: Int, reason: BitrateChangeReason)
    /// The encoder should drop frames (`true`) until told otherwise (`false`): the pacer's queue holds more than 2 s
    /// of media, or the congestion window is full (bytes in flight with no feedback for them).
    case frameDroppingChanged(Bool)
    /// An RTP packet arrived from the peer and was authenticated (a receiving connection: see
    /// ``WebRTCConnection/sendPictureLossIndication(mediaSSRC:at:)``).
    case rtpReceived(ReceivedRTPPacket)
}

/// The header fields of an RTP packet a connection received (the payload is not kept).
public struct ReceivedRTPPacket: Sendable, Hashable {
    /// Its SSRC.
    public var ssrc: UInt32
    /// Its payload type.
    public var payloadType: UInt8
    /// Its sequence number.
    public var sequenceNumber: UInt16
    /// Its RTP timestamp.
    public var timestamp: UInt32
    /// Its marker bit (the last packet of a VP8 frame).
    public var marker: Bool
    /// Its payload's length in bytes (after SRTP).
    public var payloadLength: Int
    /// The payload's first two bytes, big-endian (`nil` when shorter): an RTX packet's original sequence number
    /// (RFC 4588 §4).
    public var payloadHead: UInt16?
    /// Its transport-wide sequence number, when the peer numbers its packets
    /// (``WebRTCConnection/Remote/transportWideCCExtensionID``).
    public var transportSequenceNumber: UInt16?

    /// Creates a description.
    public init(
        ssrc: UInt32, payloadType: UInt8, sequenceNumber: UInt16, timestamp: UInt32, marker: Bool,
        payloadLength: Int, payloadHead: UInt16? = nil, transportSequenceNumber: UInt16? = nil
    ) {
        self.payloadHead = payloadHead
        self.transportSequenceNumber = transportSequenceNumber
        self.ssrc = ssrc
        self.payloadType = payloadType
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.marker = marker
        self.payloadLength = payloadLength
    }
}
