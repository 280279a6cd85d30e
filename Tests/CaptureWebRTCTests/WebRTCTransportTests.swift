import CaptureCall
import CaptureCore
import CaptureDTLS
import CaptureICE
import CaptureNet
import CaptureTestSupport
import CaptureVP8
import CaptureWebRTC
import Testing

@Suite("WebRTCTransport: ICE, DTLS-SRTP and media on one loopback 5-tuple")
struct WebRTCTransportTests {
    static let loopback = [SocketAddress.loopbackIPv4(port: 0)]

    /// A video stream for a transport to send once connected.
    static func media(from transport: WebRTCTransport) -> ConnectionMedia {
        ConnectionMedia(
            sender: VideoSenderConfiguration(remote: transport.localAddress, rtcpMux: true),
            minBitrateKbps: 100, maxBitrateKbps: 2_500, startBitrateKbps: 1_000)
    }

    static func remote(of peer: WebRTCTransport, dtlsRole: DTLSRole) -> WebRTCTransport.Remote {
        WebRTCTransport.Remote(
            credentials: peer.localCredentials, candidates: peer.localCandidates,
            fingerprint: peer.certificate.fingerprint, dtlsRole: dtlsRole, endOfCandidates: true)
    }

    @Test("a controlling DTLS server and a controlled DTLS client connect, agree the keys crosswise, carry SRTP")
    func connectAndCarryMedia() async throws {
        let publisher = try WebRTCTransport(configuration: .init(role: .controlling, hostAddresses: Self.loopback))
        defer { publisher.close() }
        let viewer = try WebRTCTransport(configuration: .init(role: .controlled, hostAddresses: Self.loopback))
        defer { viewer.close() }
        viewer.start(remote: Self.remote(of: publisher, dtlsRole: .client))
        publisher.start(
            remote: Self.remote(of: viewer, dtlsRole: .server), media: Self.media(from: publisher))
        async let publisherKeys = publisher.connected(timeout: .seconds(10))
        async let viewerKeys = viewer.connected(timeout: .seconds(10))
        let (ours, theirs) = try await (publisherKeys, viewerKeys)
        #expect(ours.profile == theirs.profile)
        #expect(ours.local == theirs.remote)
        #expect(ours.remote == theirs.local)

        for index in 0..<10 {
            publisher.consume(
                EncodedFrame(
                    bytes: [UInt8](repeating: UInt8(index), count: 3_000), isKeyFrame: index == 0,
                    rtpTimestamp: UInt32(index * 3_000), captureTimeNs: MonotonicClock.nowNs(), rotation: .degrees0,
                    dimensions: Dimensions(width: 320, height: 240), qp: 30))
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while viewer.statistics.rtpReceived < 30, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(viewer.statistics.rtpReceived == 30, "10 frames of 3,000 bytes: 3 packets each")
        #expect(publisher.mediaStatistics?.sendErrors == 0)
        #expect(publisher.statistics.mediaBlocked == 0)
        #expect(publisher.statistics.iceConnectedAfter != nil)
        #expect(publisher.statistics.dtlsConnectedAfter != nil)
    }

    @Test("ended(): the peer's close (its DTLS close_notify) ends the other side at once; our own close gives nil")
    func endedByThePeer() async throws {
        let publisher = try WebRTCTransport(configuration: .init(role: .controlling, hostAddresses: Self.loopback))
        defer { publisher.close() }
        let viewer = try WebRTCTransport(configuration: .init(role: .controlled, hostAddresses: Self.loopback))
        viewer.start(remote: Self.remote(of: publisher, dtlsRole: .client))
        publisher.start(remote: Self.remote(of: viewer, dtlsRole: .server), media: Self.media(from: publisher))
        async let publisherKeys = publisher.connected(timeout: .seconds(10))
        async let viewerKeys = viewer.connected(timeout: .seconds(10))
        _ = try await (publisherKeys, viewerKeys)
        let watching = Task { await publisher.ended() }
        let start = ContinuousClock.now
        await viewer.closed()
        let error = await watching.value
        #expect(error?.code == .closed, "the peer's close_notify: \(String(describing: error))")
        // A hang guard, not a speed check: consent alone would take 30 s.
        #expect(ContinuousClock.now - start < .seconds(20))
        if case .failed(let failure) = publisher.state {
            #expect(failure.code == .closed)
        } else {
            Issue.record("expected the publisher failed (closed by the peer), got \(publisher.state)")
        }
        #expect(await viewer.ended() == nil, "closed by us: no failure")
    }

    @Test("a wrong fingerprint fails DTLS with a typed error, and no media can be sent")
    func wrongFingerprint() async throws {
        let publisher = try WebRTCTransport(configuration: .init(role: .controlling, hostAddresses: Self.loopback))
        defer { publisher.close() }
        let viewer = try WebRTCTransport(configuration: .init(role: .controlled, hostAddresses: Self.loopback))
        defer { viewer.close() }
        let stranger = try DTLSCertificate()
        var wrong = Self.remote(of: viewer, dtlsRole: .server)
        wrong.fingerprint = stranger.fingerprint
        viewer.start(remote: Self.remote(of: publisher, dtlsRole: .client))
        publisher.start(remote: wrong)
        await #expect(throws: WebRTCTransportError.self) { try await publisher.connected(timeout: .seconds(10)) }
        if case .failed(let error) = publisher.state {
            #expect(error.code == .dtlsFailed)
        } else {
            Issue.record("expected a failed transport, got \(publisher.state)")
        }
        publisher.consume(
            EncodedFrame(
                bytes: [UInt8](repeating: 0x80, count: 100), isKeyFrame: true, rtpTimestamp: 0,
                captureTimeNs: MonotonicClock.nowNs(), rotation: .degrees0,
                dimensions: Dimensions(width: 320, height: 240),
                qp: 30))
        await publisher.closed()
        #expect(publisher.statistics.mediaBlocked == 1, "no media without a connection")
    }

    @Test("a peer that never answers: ICE's state is published (a timeout's message reads it), not left at new")
    func publishesICEState() async throws {
        let silent = try UDPSocket(bindingTo: .loopbackIPv4(port: 0))
        defer { silent.close() }
        let publisher = try WebRTCTransport(configuration: .init(role: .controlling, hostAddresses: Self.loopback))
        defer { publisher.close() }
        #expect(publisher.iceState == .new)
        let candidate = ICECandidate(
            foundation: "1", component: 1, priority: 2_130_706_431, address: silent.localAddress, kind: .host)
        publisher.start(
            remote: WebRTCTransport.Remote(
                credentials: ICECredentials(ufrag: "abcd", password: "0123456789abcdefghijkl"),
                candidates: [candidate], fingerprint: try DTLSCertificate().fingerprint, dtlsRole: .server))
        // A hang detector, not timing. The state seen is checking, or failed when a starved sanitized run delays
        // this task past ICE's 30 s checking limit (seen under TSan: a 1 s sleep took 90 s); either shows that the
        // driver publishes it, where before it stayed at new.
        let deadline = ContinuousClock.now + .seconds(60)
        while publisher.iceState == .new, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        let seen = publisher.iceState
        #expect(seen == .checking || seen == .failed, "the driver publishes ICE's state: \(seen)")
    }
}
