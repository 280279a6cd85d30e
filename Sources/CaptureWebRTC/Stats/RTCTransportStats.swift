public import CaptureDTLS
public import CaptureICE

/// The transport's figures, as W3C webrtc-stats' `RTCTransportStats` (type `transport`): everything sent and
/// received on the connection's socket, ICE's and DTLS's states and the selected pair.
public struct RTCTransportStats: Sendable, Hashable, Codable {
    /// The W3C stats type, `transport`.
    public var type = RTCStatsType.transport
    /// The stats id (`T01`, as Chromium names its first transport).
    public var id = "T01"
    /// Datagrams sent: STUN, TURN, DTLS, RTP and RTCP alike (W3C `packetsSent`).
    public var packetsSent = 0
    /// Bytes in those datagrams, as handed to the socket (W3C `bytesSent`).
    public var bytesSent = 0
    /// Datagrams received (W3C `packetsReceived`).
    public var packetsReceived = 0
    /// Bytes in those datagrams (W3C `bytesReceived`).
    public var bytesReceived = 0
    /// Our ICE role (W3C `iceRole`: `controlling` or `controlled`).
    public var iceRole: ICERole
    /// Our ICE username fragment (W3C `iceLocalUsernameFragment`).
    public var iceLocalUsernameFragment: String
    /// ICE's state (W3C `iceState`, an `RTCIceTransportState`).
    public var iceState: ICEState
    /// DTLS's state (W3C `dtlsState`).
    public var dtlsState: RTCDtlsTransportState
    /// Our DTLS role, once the peer's description fixed it (W3C `dtlsRole`).
    public var dtlsRole: DTLSRole?
    /// The selected pair's stats id (W3C `selectedCandidatePairId`).
    public var selectedCandidatePairId: String?
    /// How many times the selected pair changed (W3C `selectedCandidatePairChanges`).
    public var selectedCandidatePairChanges = 0
    /// The SRTP protection profile DTLS agreed, by its RFC name (W3C `srtpCipher`), once connected.
    public var srtpCipher: String?

    /// Creates transport figures with nothing sent or received.
    public init(
        iceRole: ICERole, iceLocalUsernameFragment: String, iceState: ICEState, dtlsState: RTCDtlsTransportState
    ) {
        self.iceRole = iceRole
        self.iceLocalUsernameFragment = iceLocalUsernameFragment
        self.iceState = iceState
        self.dtlsState = dtlsState
    }
}

/// W3C's `RTCDtlsTransportState`: where the DTLS transport is.
public enum RTCDtlsTransportState: String, Sendable, Hashable, Codable {
    /// DTLS has not started.
    case new
    /// The handshake is under way.
    case connecting
    /// The handshake is done and the keys are known.
    case connected
    /// Closed (by us or by the peer's close_notify).
    case closed
    /// The handshake or the transport failed.
    case failed
}
