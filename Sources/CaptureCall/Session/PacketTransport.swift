package import CaptureNet

/// Where a ``VideoSender`` sends when it does not own its sockets: a WebRTC transport, say, whose one UDP socket also
/// carries ICE and DTLS and whose path ICE chose.
///
/// The sender hands it finished datagrams (RTP and RTCP, already SRTP-protected) from the encoder thread and from its
/// RTCP thread, and the transport hands the peer's RTCP back through ``VideoSender/receiveRTCP(_:length:)``.
package protocol PacketTransport: Sendable {
    /// The local address packets leave from (for reports and logs).
    var localAddress: SocketAddress { get }

    /// Sends one datagram to the peer. Returns `false` when it could not go out (no path yet, consent lost, a socket
    /// error); the sender counts that and goes on.
    func send(_ datagram: UnsafeRawBufferPointer) -> Bool
}
