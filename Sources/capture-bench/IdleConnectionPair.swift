import CaptureCall
import CaptureCore
import CaptureRTP
import CaptureNet
import CaptureDTLS
import CaptureICE
import CaptureWebRTC

/// Two of our connections over loopback, connected, the controlling one with a video stream configured (so that
/// it sends its RTCP reports) that sends no frame.
struct IdleConnectionPair {
    let publisher: WebRTCTransport
    let viewer: WebRTCTransport

    static func connect() async throws -> IdleConnectionPair {
        let loopback = [SocketAddress.loopbackIPv4(port: 0)]
        let publisher = try WebRTCTransport(configuration: .init(role: .controlling, hostAddresses: loopback))
        let viewer = try WebRTCTransport(configuration: .init(role: .controlled, hostAddresses: loopback))
        viewer.start(
            remote: .init(
                credentials: publisher.localCredentials, candidates: publisher.localCandidates,
                fingerprint: publisher.certificate.fingerprint, dtlsRole: .client, endOfCandidates: true))
        let media = ConnectionMedia(
            sender: VideoSenderConfiguration(remote: publisher.localAddress, rtcpMux: true),
            minBitrateKbps: 100, maxBitrateKbps: 2_500, startBitrateKbps: 1_000)
        publisher.start(
            remote: .init(
                credentials: viewer.localCredentials, candidates: viewer.localCandidates,
                fingerprint: viewer.certificate.fingerprint, dtlsRole: .server, endOfCandidates: true),
            media: media)
        _ = try await publisher.connected(timeout: .seconds(10))
        _ = try await viewer.connected(timeout: .seconds(10))
        return IdleConnectionPair(publisher: publisher, viewer: viewer)
    }

    func close() async {
        await publisher.closed()
        await viewer.closed()
    }
}
