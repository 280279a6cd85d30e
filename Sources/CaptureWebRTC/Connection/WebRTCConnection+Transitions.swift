internal import CaptureDTLS
internal import CaptureICE
internal import CaptureNet
internal import CaptureCall
internal import CaptureCore
internal import CaptureRTP
import Logging

extension WebRTCConnection {
    // MARK: Routing what arrives

    /// Routes one datagram by its first byte (RFC 7983); `relay` is our relayed address when it came through TURN.
    func route(
        _ datagram: UnsafeMutableRawBufferPointer, from source: SocketAddress, relay: SocketAddress?, nowNs: UInt64
    ) {
        if source == selectedRemote { pairReceived.count(datagram.count) }
        switch DatagramKind(classifying: UnsafeRawBufferPointer(datagram)) {
        case .stun:
            counters.stunReceived += 1
            ice.handle(datagram: UnsafeRawBufferPointer(datagram), from: source, relay: relay, nowNs: nowNs)
        case .dtls:
            counters.dtlsReceived += 1
            // A datagram that ends the handshake in failure also sets the endpoint's state, which advance reports.
            switch phase {
            case .connecting(let handshake):
                try? handshake.dtls.handle(datagram: Array(datagram), nowNs: Int64(clamping: nowNs))
            case .connected(let established):
                try? established.dtls.handle(datagram: Array(datagram), nowNs: Int64(clamping: nowNs))
            case .new, .failed, .closed: break
            }
        case .rtcp:
            counters.rtcpReceived += 1
            guard case .connected(let established) = phase, let media = established.media,
                let packets = media.unprotectAndParseRTCP(datagram, length: datagram.count)
            else { return }
            countUnknownSSRCs(in: packets, ours: established.ssrcs)
            for (index, stream) in established.streams.enumerated() {
                handleRTCP(packets, on: stream, index: index, nowNs: nowNs)
            }
            // Retransmissions the NACKs asked for, and probes the feedback started, leave now if the pacer lets them.
            drainPacer(nowNs: nowNs)
        case .rtp:
            counters.rtpReceived += 1
            guard case .connected(let established) = phase else { return }
            var length = datagram.count
            do throws(SRTPError) {
                try established.srtpIn.unprotectRTP(datagram, length: &length)
            } catch {
                return
            }
            let plain = UnsafeRawBufferPointer(rebasing: datagram[0..<length])
            guard let packet = try? RTPPacket(parsing: plain) else { return }
            let transportNumber = receiveTransportWideID.flatMap {
                TransportSequenceNumberExtension.sequenceNumber(in: packet.header, id: $0)
            }
            if let transportNumber {
                feedbackGenerator?.record(
                    sequenceNumber: transportNumber, arrivalTimeNs: nowNs, mediaSSRC: packet.header.ssrc)
            }
            let payload = packet.payloadRange
            let head =
                payload.count >= 2
                ? UInt16(plain[payload.lowerBound]) << 8 | UInt16(plain[payload.lowerBound + 1]) : nil
            events.append(
                .rtpReceived(
                    ReceivedRTPPacket(
                        ssrc: packet.header.ssrc, payloadType: packet.header.payloadType,
                        sequenceNumber: packet.header.sequenceNumber, timestamp: packet.header.timestamp,
                        marker: packet.header.marker, payloadLength: payload.count, payloadHead: head,
                        transportSequenceNumber: transportNumber)))
        case .unknown:
            counters.unknownReceived += 1
        }
    }

    /// Hands the peer's RTCP to one of our streams (simulcast layer `index`) and acts on what it asks: key frames of
    /// that layer, and, from the first stream (which takes the transport's shared feedback), rate changes,
    /// transport-wide feedback and round-trip times.
    private func handleRTCP(_ packets: [RTCPPacket], on stream: RTPSendSession, index: Int, nowNs: UInt64) {
        guard case .connected(var established) = phase else { return }
        // An RTCP datagram changes nothing in ICE: the path worked out after the last input holds.
        let route = mediaPath
        stream.handleRTCP(
            packets, nowNs: nowNs, currentTargetKbps: established.targetKbps,
            output: { sendMedia($0, route: route) }, pacesRetransmissions: pacing != nil,
            retransmit: { enqueuePaced($0, kind: .retransmission, stream: index, nowNs: nowNs) },
            sharedFeedback: index == 0 ? established.ssrcs : nil)
        while let feedback = stream.pollFeedback() {
            switch feedback {
            case .keyFrameRequest(let reason): events.append(.keyFrameRequested(reason, simulcastIndex: index))
            case .targetBitrate(let kbps, _) where congestion != nil:
                // A receiver's ceiling (the session keeps no loss estimate of its own under a controller).
                estimate(ceilingKbps: kbps, nowNs: nowNs)
            case .targetBitrate(let kbps, let reason):
                let clamped = min(max(kbps, established.range.lowerBound), established.range.upperBound)
                guard clamped != established.targetKbps else { continue }
                established.targetKbps = clamped
                phase = .connected(established)
                events.append(.targetBitrateChanged(kbps: clamped, reason: reason))
            case .transportFeedback(let report): onTransportFeedback(report, at: nowNs)
            case .roundTripTime(let rtt): estimate(roundTripTime: rtt, nowNs: nowNs)
            }
            // The estimate may have moved the target: the next feedback reads it from the phase.
            if case .connected(let updated) = phase { established = updated }
        }
    }

    /// Counts key-frame requests and NACKs for an SSRC none of our streams sends (a confused or hostile peer; 0 in a
    /// PLI means "any", RFC 4585 leaves it to the sender).
    private func countUnknownSSRCs(in packets: [RTCPPacket], ours: Set<UInt32>) {
        for packet in packets {
            switch packet {
            case .pictureLossIndication(_, let mediaSSRC) where mediaSSRC != 0 && !ours.contains(mediaSSRC):
                counters.feedbackForUnknownSSRC += 1
            case .genericNACK(_, let mediaSSRC, _) where !ours.contains(mediaSSRC):
                counters.feedbackForUnknownSSRC += 1
            case .fullIntraRequest(_, let entries) where !entries.contains(where: { ours.contains($0.ssrc) }):
                counters.feedbackForUnknownSSRC += 1
            default: break
            }
        }
    }

    /// A datagram from a TURN server: ChannelData on the media route's channel is unwrapped in place (the relayed
    /// media path); anything else goes to the agent, which returns the peer's datagram it carried, if any.
    func handleFromTURNServer(_ datagram: UnsafeMutableRawBufferPointer, from source: SocketAddress, nowNs: UInt64) {
        let raw = UnsafeRawBufferPointer(datagram)
        if let relay = ice.selectedRelay, relay.server == source, let channel = relay.channel,
            TURNAllocation.channelNumber(raw) == channel, let pair = ice.selectedPair
        {
            guard let (_, payload) = TURNAllocation.parseChannelData(raw) else {
                counters.unknownReceived += 1
                return
            }
            route(
                UnsafeMutableRawBufferPointer(rebasing: datagram[payload]), from: pair.remote.address,
                relay: pair.local.address, nowNs: nowNs)
            return
        }
        counters.turnReceived += 1
        guard case .data(let peer, let relay, let payload) = ice.handleFromTURNServer(raw, from: source, nowNs: nowNs)
        else { return }
        route(UnsafeMutableRawBufferPointer(rebasing: datagram[payload]), from: peer, relay: relay, nowNs: nowNs)
    }

    // MARK: Following ICE and DTLS

    /// Queues what ICE and DTLS want sent, follows their state, and reports what changed; then works out the media
    /// route for the frames until the next input.
    func advance(nowNs: UInt64) {
        followICEAndDTLS(nowNs: nowNs)
        mediaPath = mediaRoute()
        selectedRemote = ice.selectedPair?.remote.address
    }

    private func followICEAndDTLS(nowNs: UInt64) {
        drainICE()
        while let event = ice.pollEvent() {
            switch event {
            case .localCandidate(let candidate):
                logger.info("ICE candidate gathered", metadata: ["candidate": "\(candidate)"])
                events.append(.localCandidate(candidate))
            case .relayFailed(let error):
                logger.warning("TURN allocation failed; no relayed candidate", metadata: ["error": "\(error)"])
                events.append(.relayFailed(error))
            case .gatheringComplete: events.append(.gatheringComplete)
            case .stateChanged(let state): events.append(.iceStateChanged(state))
            case .selectedPair(let pair):
                selectedPairChanges += 1
                events.append(.selectedPair(pair))
            case .roleChanged: break
            }
        }
        let pair = ice.selectedPair
        if let pair, counters.iceConnectedAfter == nil, !isOver {
            counters.iceConnectedAfter = .nanoseconds(Int64(clamping: nowNs &- startNs))
            logger.info("ICE connected", metadata: ["pair": "\(pair)", "types": "\(pair.candidateTypes)"])
        }
        switch phase {
        case .connecting(var handshake):
            if pair != nil, handshake.dtlsRole == .client, !handshake.dtlsStarted {
                handshake.dtlsStarted = true
                phase = .connecting(handshake)
                handshake.dtls.start(nowNs: Int64(clamping: nowNs))
            }
            if pair != nil { drainDTLS(handshake.dtls) }
            if ice.state == .failed {
                fail(WebRTCTransportError(.iceFailed, "no candidate pair worked"))
                return
            }
            switch handshake.dtls.state {
            case .connected:
                if let keys = handshake.dtls.srtpKeys { establish(handshake, keys: keys, nowNs: nowNs) }
            case .failed(let error): fail(WebRTCTransportError(.dtlsFailed, "\(error)"))
            default: break
            }
        case .connected(let established):
            if pair != nil { drainDTLS(established.dtls) }
            // The peer ended the association: its close_notify (a browser's pc.close(), a tab closed) or a fatal
            // alert. Nothing it sends will be decrypted any more, so the connection is over now rather than when
            // consent runs out 30 s later.
            switch established.dtls.state {
            case .closed:
                fail(WebRTCTransportError(.closed, "the peer closed the connection (DTLS close_notify)"))
                return
            case .failed(let error):
                fail(WebRTCTransportError(.dtlsFailed, "DTLS failed after connecting: \(error)"))
                return
            case .new, .connecting, .connected: break
            }
            if !ice.canSendMedia, ice.state != .checking {
                fail(WebRTCTransportError(.iceFailed, "consent lost (RFC 7675): media stopped"))
            }
        case .new, .failed, .closed: break
        }
    }

    var isOver: Bool {
        switch phase {
        case .failed, .closed: true
        case .new, .connecting, .connected: false
        }
    }

    /// DTLS is connected: the SRTP sessions and the stream's RTP session are made, and the owner told.
    private func establish(_ handshake: Handshake, keys: DTLSSRTPKeys, nowNs: UInt64) {
        let srtpIn: SRTPSession
        var streams: [RTPSendSession] = []
        var feedbackSRTCP: SRTPSession?
        let feedbackSSRC = UInt32.random(in: 1...UInt32.max)
        do {
            srtpIn = try SRTPSession(role: .receiver, keyingMaterial: keys.remote, profile: keys.profile)
            if let configuration = handshake.media {
                // The connection's one transport-wide counter, shared by every stream (each keeps it only if the id
                // is valid).
                let counter = configuration.sender.packetizer.transportSequenceNumberExtensionID.map {
                    TransportWideSender(extensionID: $0)
                }
                for var sender in configuration.streams {
                    // With transport-wide feedback the connection's congestion controller estimates from loss and
                    // delay; the session's receiver-report loss estimate would fight it. Only the first stream keeps
                    // one otherwise: it takes the rate feedback for all.
                    if sender.packetizer.transportSequenceNumberExtensionID != nil,
                        configuration.congestionControl == .transportWide
                    {
                        sender.lossBasedRateControl = false
                    }
                    if !streams.isEmpty { sender.lossBasedRateControl = false }
                    sender.packetizer.transportSequenceNumberExtensionID =
                        configuration.sender.packetizer.transportSequenceNumberExtensionID
                    sender.srtp = keys.local
                    sender.remoteSRTP = keys.remote
                    streams.append(
                        try RTPSendSession(
                            configuration: sender, nowNs: nowNs, clock: clock.ntpMapping, logger: logger,
                            transportWide: counter))
                }
            } else {
                feedbackSRTCP = try SRTPSession(role: .sender, keyingMaterial: keys.local, profile: keys.profile)
            }
        } catch {
            fail(WebRTCTransportError(.dtlsFailed, "SRTP setup failed: \(error)"))
            return
        }
        transportWide = streams.first?.transportWide
        if receiveTransportWideID != nil {
            feedbackGenerator = TransportFeedbackGenerator(
                configuration: TransportFeedbackGenerator.Configuration(senderSSRC: feedbackSSRC))
        }
        let range = handshake.media.map { $0.minBitrateKbps...$0.maxBitrateKbps } ?? 0...0
        if transportWide != nil, let configuration = handshake.media, configuration.congestionControl == .transportWide
        {
            congestion = CongestionControl(
                minimumKbps: configuration.minBitrateKbps, startKbps: configuration.startBitrateKbps,
                maximumKbps: configuration.maxBitrateKbps, probesStaleEstimate: configuration.probesStaleEstimate,
                at: clock.instant(atNanoseconds: nowNs))
        }
        if let media = streams.first {
            startPacing(for: media, startKbps: handshake.media?.startBitrateKbps ?? 0, nowNs: nowNs)
        }
        phase = .connected(
            Established(
                dtls: handshake.dtls, keys: keys, streams: streams, ssrcs: Set(streams.map(\.ssrc)), range: range,
                targetKbps: handshake.media?.startBitrateKbps ?? 0, srtpIn: srtpIn,
                feedbackSSRC: feedbackSSRC, feedbackSRTCP: feedbackSRTCP))
        counters.dtlsConnectedAfter = .nanoseconds(Int64(clamping: nowNs &- startNs))
        logger.info(
            "DTLS connected", metadata: ["profile": "\(keys.profile)", "streams": "\(streams.count)"])
        events.append(.connected(keys))
    }

    func fail(_ error: WebRTCTransportError) {
        guard !isOver else { return }
        logger.warning("WebRTC connection failed", metadata: ["error": "\(error)"])
        keepFinalMediaFigures()
        stopPacing()
        phase = .failed(error)
        events.append(.failed(error))
    }

    // MARK: Sending

    /// Queues what ICE wants sent.
    func drainICE() {
        while let transmit = ice.pollTransmit() {
            guard let source = hostAddress(for: transmit.destination) else { continue }
            transmit.bytes.withUnsafeBytes { _ = transmits.append($0, from: source, to: transmit.destination) }
        }
    }

    /// Queues what DTLS wants sent, to the selected pair's peer (nothing before there is one).
    func drainDTLS(_ dtls: DTLSEndpoint) {
        guard let route = currentRoute() else { return }
        while let datagram = dtls.pollTransmit() {
            datagram.withUnsafeBytes { _ = sendToPeer($0, route: route) }
        }
    }

    /// Our host address of `destination`'s family: the socket a datagram to it leaves from.
    func hostAddress(for destination: SocketAddress) -> SocketAddress? {
        destination.family == .ipv4 ? hostIPv4 : hostIPv6
    }

    /// The selected pair and how to reach its peer, whatever consent says.
    func currentRoute() -> Route? {
        guard let pair = ice.selectedPair else { return nil }
        let relay = ice.selectedRelay
        return Route(pair: pair, relayServer: relay?.server, channel: relay?.channel)
    }

    /// The route media may take: the selected pair while consent holds, and only while connected.
    func mediaRoute() -> Route? {
        guard case .connected = phase, ice.canSendMedia else { return nil }
        return currentRoute()
    }

    /// Queues one media datagram on `route`; `false` (and counted) without one.
    func sendMedia(_ datagram: UnsafeRawBufferPointer, route: Route?) -> Bool {
        guard let route else {
            counters.mediaBlocked += 1
            return false
        }
        guard sendToPeer(datagram, route: route) else {
            counters.mediaSendErrors += 1
            return false
        }
        counters.mediaSent += 1
        return true
    }

    /// Queues `datagram` for the route's peer: straight, as ChannelData framed in place once the channel is bound,
    /// or as a Send indication until then.
    @discardableResult
    func sendToPeer(_ datagram: UnsafeRawBufferPointer, route: Route) -> Bool {
        pairSent.count(datagram.count)
        let peer = route.pair.remote.address
        guard let server = route.relayServer else {
            guard let source = hostAddress(for: peer) else { return false }
            return transmits.append(datagram, from: source, to: peer)
        }
        guard let source = hostAddress(for: server) else { return false }
        if let channel = route.channel {
            return transmits.append(from: source, to: server) { slot in
                TURNAllocation.frameChannelData(channel: channel, payload: datagram, into: slot)
            }
        }
        guard let (bytes, destination) = ice.wrapForRelay(Array(datagram), pair: route.pair) else { return false }
        return bytes.withUnsafeBytes { transmits.append($0, from: source, to: destination) }
    }

    /// Sends our own RTCP feedback (PLI, NACK, transport-wide feedback) to the peer, protected with SRTCP: with the stream's session when
    /// we send one, else with the feedback session.
    /// Whether it went out.
    @discardableResult
    func sendFeedback(_ packets: [RTCPPacket]) -> Bool {
        guard case .connected(let established) = phase else { return false }
        let route = mediaPath
        if let media = established.media {
            return media.sendRTCP(packets) { sendMedia($0, route: route) }
        }
        return CaptureCall.sendRTCP(packets, protectingWith: established.feedbackSRTCP) { sendMedia($0, route: route) }
    }
}
