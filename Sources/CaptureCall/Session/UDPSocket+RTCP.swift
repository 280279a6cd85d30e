internal import CaptureRTP

extension UDPSocket {
    /// Serializes `packets` as one compound RTCP packet, protects it as SRTCP when `srtp` is given, and sends it to
    /// `address`. Whether it went out (a failed protection or send is the caller's to count).
    func sendRTCP(_ packets: [RTCPPacket], to address: SocketAddress, protectingWith srtp: SRTPSession?) -> Bool {
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
            return send(UnsafeRawBufferPointer(rebasing: buffer[0..<length]), to: address)
        }
    }
}
