public import CaptureNet

/// What one `TURNAllocation` has done, for logs and probes.
public struct TURNAllocationStatistics: Sendable, Hashable, Codable {
    /// The server's name (its `turn:` URL).
    public var server: String
    /// The allocation's state.
    public var state: TURNAllocationState
    /// The relayed address, once allocated.
    public var relayedAddress: SocketAddress?
    /// Our address as the server saw it, once allocated.
    public var mappedAddress: SocketAddress?
    /// The lifetime the server granted, in seconds.
    public var lifetimeSeconds: UInt32?
    /// Requests sent (Allocate, Refresh, CreatePermission, ChannelBind; not counting retransmissions).
    public var requestsSent = 0
    /// Retransmitted requests.
    public var retransmissions = 0
    /// Error responses received (401 challenges included).
    public var errorResponses = 0
    /// 438 Stale Nonce answers, each retried with the new nonce.
    public var staleNonces = 0
    /// Refreshes that succeeded.
    public var refreshes = 0
    /// Permissions installed (CreatePermission successes, refreshes included).
    public var permissionsInstalled = 0
    /// Channels bound (ChannelBind successes, refreshes included).
    public var channelsBound = 0
    /// Datagrams wrapped by the allocation itself (Send indications and ChannelData from ICE; media framed by the
    /// transport is not counted here).
    public var datagramsSent = 0
    /// Datagrams from peers unwrapped (Data indications and ChannelData).
    public var datagramsReceived = 0
    /// Messages from the server dropped as malformed, unexpected or unverifiable.
    public var dropped = 0
    /// The last failure, if any.
    public var lastError: TURNError?

    /// Statistics for an allocation on `server`, not started.
    public init(server: String) {
        self.server = server
        self.state = .new
    }
}
