internal import CaptureNet

extension UDPSocket {
    /// Binds the RTP socket at `local` and, without rtcp-mux, the RTCP socket on the port above it (RFC 3550 §11).
    ///
    /// With port 0 the RTP port is ephemeral and the one above it may be taken: the pair is then tried again, up to 16
    /// times, before the last error is thrown. A fixed port is tried once (`portInUse` naming whichever was taken).
    static func bindRTPPair(
        at local: SocketAddress, rtcpMux: Bool
    ) throws(SocketError) -> (rtp: UDPSocket, rtcp: UDPSocket) {
        let attempts = local.port == 0 ? 16 : 1
        var lastError = SocketError.closed
        for _ in 0..<attempts {
            let rtp = try UDPSocket(bindingTo: local)
            if rtcpMux { return (rtp, rtp) }
            let port = rtp.localAddress.port
            guard port < UInt16.max else {
                rtp.close()
                lastError = .portInUse(local.withPort(port))
                continue
            }
            do throws(SocketError) {
                return (rtp, try UDPSocket(bindingTo: local.withPort(port + 1)))
            } catch {
                rtp.close()
                lastError = error
            }
        }
        throw lastError
    }
}
