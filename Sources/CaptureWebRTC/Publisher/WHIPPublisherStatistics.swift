public import CaptureCall
public import CaptureICE

/// What a ``WHIPPublisher`` has done: its transport, ICE, sender and pipeline figures together.
public struct WHIPPublisherStatistics: Sendable {
    /// The transport's state (`connected` once DTLS finished).
    public var transportState: String
    /// The selected ICE pair, described.
    public var selectedPair: String?
    /// The selected pair's candidate types, e.g. `"relay → host"`.
    public var selectedPairTypes: String? { ice.selectedPair?.candidateTypes }
    /// ICE's figures.
    public var ice: ICEStatistics
    /// The TURN allocations' figures (state, relayed address, errors), one per TURN server.
    public var turn: [TURNAllocationStatistics] = []
    /// What was trickled after the offer: the endpoint's `Link` servers used, candidates PATCHed, PATCHes refused.
    public var trickle = WHIPTrickleStatistics()
    /// The transport's figures (datagrams by kind, media blocked, times to connected).
    public var transport: WebRTCTransportStatistics
    /// The RTP sender's figures (packets, NACKs, retransmissions, PLIs, REMB, RTT…), once it exists.
    public var sender: VideoSenderStatistics?
    /// The send pipeline's figures (frames encoded, key frames, target bit rate…), once it exists.
    public var pipeline: SendPipelineStatistics?
    /// From ``WHIPPublisher/start()`` to the answer.
    public var answeredAfter: Duration?
    /// From ``WHIPPublisher/start()`` to DTLS connected (media may flow).
    public var connectedAfter: Duration?
    /// With simulcast: the layers the answer let us send (1 when it accepted none, or without simulcast).
    public var simulcastLayers = 1
    /// With simulcast: the offered rids the answer rejected or paused, and any it named without our offering them.
    public var rejectedRids: [String] = []
    /// Each simulcast layer's RTP sender figures, layer 0 first (``sender`` is layer 0's); empty without simulcast.
    public var layerSenders: [VideoSenderStatistics] = []

    /// Creates statistics.
    public init(
        transportState: String, selectedPair: String?, ice: ICEStatistics, transport: WebRTCTransportStatistics,
        sender: VideoSenderStatistics?, pipeline: SendPipelineStatistics?, answeredAfter: Duration?,
        connectedAfter: Duration?, turn: [TURNAllocationStatistics] = [], trickle: WHIPTrickleStatistics = .init()
    ) {
        self.trickle = trickle
        self.turn = turn
        self.transportState = transportState
        self.selectedPair = selectedPair
        self.ice = ice
        self.transport = transport
        self.sender = sender
        self.pipeline = pipeline
        self.answeredAfter = answeredAfter
        self.connectedAfter = connectedAfter
    }
}
