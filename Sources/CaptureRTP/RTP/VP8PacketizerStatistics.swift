/// What a ``VP8Packetizer`` has produced so far.
public struct VP8PacketizerStatistics: Sendable, Hashable, Codable {
    /// Frames packetized.
    public var frames: Int = 0
    /// Packets emitted.
    public var packets: Int = 0
    /// VP8 bitstream bytes carried.
    public var payloadBytes: Int = 0
    /// RTP header, header extension and VP8 payload descriptor bytes added.
    public var overheadBytes: Int = 0

    /// Creates empty statistics.
    public init() {}
}
