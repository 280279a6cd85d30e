public import CaptureCall
public import CaptureICE
public import CaptureNet
public import CaptureVP8
import Foundation

/// How a ``WHIPPublisher`` publishes.
public struct WHIPPublisherConfiguration: Sendable {
    /// The WHIP endpoint (RFC 9725) to POST the offer to.
    public var endpoint: URL
    /// A bearer token for the endpoint, or `nil`.
    public var bearerToken: String?
    /// STUN and TURN servers the user gave (`stun:host:port`, `turn:host:port` with a username and credential); the
    /// endpoint's `Link: rel="ice-server"` headers add more.
    public var iceServers: [ICEServer]
    /// Which candidates are offered: `ICETransportPolicy/relay` offers only relayed ones (a TURN server is then
    /// required).
    public var iceTransportPolicy: ICETransportPolicy
    /// How long gathering from STUN and TURN servers may delay the offer.
    public var gatheringTimeout: Duration
    /// The encoder: WebRTC's real-time VP8 settings, start bit rate and frame rate.
    public var encoder: VP8EncoderConfiguration
    /// The lowest bit rate REMB or loss may take the encoder to, in kbit/s.
    public var minBitrateKbps: Int
    /// The highest, in kbit/s; a REMB above it is capped here.
    public var maxBitrateKbps: Int
    /// The largest RTP packet, headers and extensions included.
    public var maxPacketSize: Int
    /// Offer RTX and answer NACKs with it (RFC 4588); without it NACKs are only counted.
    public var retransmission: Bool
    /// Drop this share of first transmissions on the way out (never retransmissions), reproducibly.
    public var firstTransmissionLoss: SimulatedLoss?
    /// Local addresses to offer as host candidates; `nil` takes every interface that is up (loopback excluded).
    public var hostAddresses: [SocketAddress]?
    /// How long ICE and DTLS may take after the answer.
    public var connectTimeout: Duration
    /// How long each HTTP request may take.
    public var httpTimeout: Duration
    /// The camera's id, the `device` dimension of the sender's metrics.
    public var metricsDeviceID: String
    /// What steers the rate: the send-side estimate from transport-wide feedback when the endpoint negotiates it (the
    /// default), or receiver reports (see ``CongestionControlMode``).
    public var congestionControl: CongestionControlMode
    /// Whether the send-side estimate probes itself when it has gone untested (off by default; see
    /// ``ConnectionMedia/probesStaleEstimate``).
    public var probesStaleEstimate = false
    /// Simulcast: how many encodings to offer (1, the default: one stream; 2 or 3). Each is its own RTP stream with
    /// its own SSRC and RTX SSRC, named by `rid` `l`, `m`, `h` from the lowest resolution up and offered highest first
    /// (RFC 8851, RFC 8853; the order Janus maps to substreams 2, 1, 0). The send pipeline encodes as many as the
    /// capture size allows (libwebrtc's rule: 1280x720 gives 3, 640x480 2), each with ``encoder``'s temporal layers,
    /// and shares the congestion controller's target among them; the layers the answer does not accept are not
    /// sent, and an answer without simulcast gets one stream.
    public var simulcastLayers = 1

    /// Creates a configuration.
    public init(
        endpoint: URL, bearerToken: String? = nil, iceServers: [ICEServer] = [],
        encoder: VP8EncoderConfiguration = VP8EncoderConfiguration(), minBitrateKbps: Int = 100,
        maxBitrateKbps: Int = 2_500, maxPacketSize: Int = 1_200, retransmission: Bool = true,
        firstTransmissionLoss: SimulatedLoss? = nil, hostAddresses: [SocketAddress]? = nil,
        connectTimeout: Duration = .seconds(10), httpTimeout: Duration = .seconds(10),
        metricsDeviceID: String = "unknown", iceTransportPolicy: ICETransportPolicy = .all,
        gatheringTimeout: Duration = .seconds(5), congestionControl: CongestionControlMode = .transportWide
    ) {
        self.congestionControl = congestionControl
        self.iceTransportPolicy = iceTransportPolicy
        self.gatheringTimeout = gatheringTimeout
        self.endpoint = endpoint
        self.bearerToken = bearerToken
        self.iceServers = iceServers
        self.encoder = encoder
        self.minBitrateKbps = minBitrateKbps
        self.maxBitrateKbps = maxBitrateKbps
        self.maxPacketSize = maxPacketSize
        self.retransmission = retransmission
        self.firstTransmissionLoss = firstTransmissionLoss
        self.hostAddresses = hostAddresses
        self.connectTimeout = connectTimeout
        self.httpTimeout = httpTimeout
        self.metricsDeviceID = metricsDeviceID
    }
}
