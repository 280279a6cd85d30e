import CaptureCore
import CaptureRTP

/// One packet copied out of the packetizer's reused buffer.
struct CapturedPacket {
    var bytes: [UInt8]
    var sequenceNumber: UInt16
    var isFirst: Bool
    var isLast: Bool

    /// The parsed packet and its VP8 descriptor.
    func parsed() throws -> (packet: RTPPacket, descriptor: VP8PayloadDescriptor, descriptorSize: Int) {
        try bytes.withUnsafeBytes { raw in
            let packet = try RTPPacket(parsing: raw)
            let (descriptor, size) = try VP8PayloadDescriptor.parse(
                UnsafeRawBufferPointer(rebasing: raw[packet.payloadRange]))
            return (packet, descriptor, size)
        }
    }
}

enum RTPTestPackets {
    /// A fake VP8 frame: the first byte's bit 0 says key (0) or delta (1); the rest is a recognisable pattern.
    static func frame(size: Int, key: Bool, seed: Int = 0) -> [UInt8] {
        (0..<size).map { index in
            index == 0 ? (key ? 0x10 : 0x11) : UInt8(truncatingIfNeeded: index &* 31 &+ seed)
        }
    }

    /// Packetizes `frame` (of temporal layer `layer`, with the Y bit `sync`, when given) and copies every packet out.
    static func packetize(
        _ frame: [UInt8], with packetizer: VP8Packetizer, timestamp: UInt32, key: Bool = true,
        droppable: Bool = false, rotation: VideoRotation = .degrees0, layer: UInt8? = nil, sync: Bool = false
    ) -> [CapturedPacket] {
        var packets: [CapturedPacket] = []
        frame.withUnsafeBytes { raw in
            packetizer.packetize(
                raw, rtpTimestamp: timestamp, isKeyFrame: key, isDroppable: droppable, rotation: rotation,
                temporalLayerIndex: layer, isLayerSync: sync
            ) { (packet: inout OutgoingRTPPacket) in
                packets.append(
                    CapturedPacket(
                        bytes: Array(packet.bytes), sequenceNumber: packet.sequenceNumber,
                        isFirst: packet.isFirstPacketOfFrame, isLast: packet.isLastPacketOfFrame))
            }
        }
        return packets
    }
}
