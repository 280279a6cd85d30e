internal import CaptureNet
package import CaptureRTP

/// Serializes `packets` as one compound RTCP packet, protects it as SRTCP when `srtp` is given, and hands it to `send`.
/// Whether it went out (a failed protection or send is the caller's to count).
package func sendRTCP(
    _ packets: [RTCPPacket], protectingWith srtp: SRTPSession?, send: (UnsafeRawBufferPointer) -> Bool
) -> Bool {
    var bytes = RTCPCompoundPacket.serialize(packets)
    let payloadLength = bytes.count
    bytes.append(contentsOf: repeatElement(0, count: SRTPSession.maximumTrailerLength))
    return bytes.withUnsafeMutableBytes { buffer in
        var length = payloadLength
        if let srtp {
            do throws(SRTPError) {
                try srtp.protectRTCP(buffer, length: &length)
            } catch {
                return false
            }
        }
        return send(UnsafeRawBufferPointer(rebasing: buffer[0..<length]))
    }
}

extension UDPSocket {
    /// Sends `packets` as one compound (SRTCP-protected when `srtp` is given) RTCP packet to `address`.
    func sendRTCP(_ packets: [RTCPPacket], to address: SocketAddress, protectingWith srtp: SRTPSession?) -> Bool {
        CaptureCall.sendRTCP(packets, protectingWith: srtp) { send($0, to: address) }
    }
}
