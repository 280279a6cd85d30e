/// Parsing and serializing whole RTCP datagrams (RFC 3550 §6.1): one or more packets back to back.
public enum RTCPCompoundPacket {
    /// Serializes `packets` back to back into one datagram.
    public static func serialize(_ packets: [RTCPPacket]) -> [UInt8] {
        var bytes: [UInt8] = []
        serialize(packets, into: &bytes)
        return bytes
    }

    /// Appends `packets` to `bytes`. Reusing one array (`removeAll(keepingCapacity: true)`) allocates nothing once it
    /// has grown to the largest datagram.
    public static func serialize(_ packets: [RTCPPacket], into bytes: inout [UInt8]) {
        for packet in packets { packet.serialize(into: &bytes) }
    }
}
