internal import CaptureCall
internal import CaptureCongestion
internal import CaptureDTLS
internal import CaptureICE
internal import CaptureRTP

extension WebRTCConnection {
    /// The connection's statistics at `now`, in W3C webrtc-stats' names and shapes (``WebRTCStatsReport``): the
    /// transport, the selected pair and its candidates, and the stream we send as `outbound-rtp` and as the peer's
    /// receiver reports describe it (`remote-inbound-rtp`). The encoder's fields of `outbound-rtp` are left `nil`:
    /// the encoder is not the connection's.
    public func statsReport(at now: ContinuousClock.Instant) -> WebRTCStatsReport {
        var transport = RTCTransportStats(
            iceRole: ice.role, iceLocalUsernameFragment: configuration.credentials.ufrag, iceState: ice.state,
            dtlsState: dtlsTransportState)
        transport.packetsSent = transmits.appended.packets
        transport.bytesSent = transmits.appended.bytes
        transport.packetsReceived = received.packets
        transport.bytesReceived = received.bytes
        transport.dtlsRole = dtlsRole
        transport.selectedCandidatePairChanges = selectedPairChanges
        if case .connected(let established) = phase { transport.srtpCipher = established.keys.profile.sdesName }

        var report = WebRTCStatsReport(
            timestamp: startNs == 0 ? .zero : .nanoseconds(Int64(clamping: clock.nanoseconds(at: now) &- startNs)),
            transport: transport)
        if let pair = ice.selectedPair {
            let iceFigures = ice.statistics
            var pairStats = RTCIceCandidatePairStats(pair)
            pairStats.packetsSent = pairSent.packets
            pairStats.bytesSent = pairSent.bytes
            pairStats.packetsReceived = pairReceived.packets
            pairStats.bytesReceived = pairReceived.bytes
            pairStats.currentRoundTripTime = iceFigures.lastRoundTrip
            pairStats.totalRoundTripTime = iceFigures.totalRoundTrip
            pairStats.requestsSent = iceFigures.checksSent
            pairStats.requestsReceived = iceFigures.checksReceived
            pairStats.responsesReceived = iceFigures.successes + iceFigures.consentResponsesReceived
            pairStats.responsesSent = iceFigures.responsesSent
            pairStats.consentRequestsSent = iceFigures.consentRequestsSent
            pairStats.availableOutgoingBitrate = congestion.map { Double($0.estimator.targetBitrate) }
            report.transport.selectedCandidatePairId = pairStats.id
            report.candidatePair = pairStats
            report.localCandidate = RTCIceCandidateStats(pair.local, local: true)
            report.remoteCandidate = RTCIceCandidateStats(pair.remote, local: false)
        }
        let streams = sentStreams
        if let stream = streams.first {
            let sent = stream.statistics
            var outbound = Self.outbound(stream, layers: streams.count)
            if case .connected(let established) = phase {
                outbound.targetBitrate = Double(established.targetKbps) * 1_000
            }
            report.outboundRTP = outbound
            report.simulcastLayers = streams.dropFirst().map { Self.outbound($0, layers: streams.count) }
            if sent.receiverReports > 0 {
                report.remoteInboundRTP = RTCRemoteInboundRTPStreamStats(
                    ssrc: stream.ssrc, localId: outbound.id, packetsLost: sent.remotePacketsLost,
                    fractionLost: sent.remoteFractionLost, jitter: sent.remoteJitter ?? .zero,
                    roundTripTime: sent.roundTripTime, totalRoundTripTime: sent.totalRoundTripTime,
                    roundTripTimeMeasurements: sent.roundTripTimeMeasurements)
            }
        }
        return report
    }

    /// One stream's `outbound-rtp` (with its `rid` and index when it is one of `layers` simulcast layers).
    private static func outbound(_ stream: SentStream, layers: Int) -> RTCOutboundRTPStreamStats {
        let sent = stream.statistics
        var outbound = RTCOutboundRTPStreamStats(ssrc: stream.ssrc, rtxSsrc: stream.rtxSSRC)
        outbound.packetsSent = sent.packets + sent.retransmissions
        outbound.bytesSent = sent.bytes - sent.overheadBytes + sent.retransmittedBytes
        outbound.headerBytesSent = sent.overheadBytes
        outbound.retransmittedPacketsSent = sent.retransmissions
        outbound.retransmittedBytesSent = sent.retransmittedBytes
        outbound.framesSent = sent.frames
        outbound.keyFramesEncoded = sent.keyFramesSent
        outbound.nackCount = sent.nacksReceived
        outbound.pliCount = sent.plisReceived
        outbound.firCount = sent.firsReceived
        if layers > 1 {
            outbound.encodingIndex = stream.index
            outbound.rid = stream.rid
        }
        return outbound
    }

    /// A stream we send: its SSRCs and figures.
    struct SentStream {
        var index: Int
        var ssrc: UInt32
        var rtxSSRC: UInt32?
        var rid: String?
        var statistics: VideoSenderStatistics

        init(_ media: RTPSendSession, index: Int) {
            self.index = index
            ssrc = media.ssrc
            rtxSSRC = media.configuration.retransmission?.rtxSSRC
            rid = media.rid
            statistics = media.statistics
        }
    }

    /// The streams we send (simulcast layer 0 first), live, or as they were when the connection closed or failed.
    var sentStreams: [SentStream] {
        if case .connected(let established) = phase, !established.streams.isEmpty {
            return established.streams.enumerated().map { SentStream($1, index: $0) }
        }
        return finalStreams
    }

    /// Keeps the streams' last figures and SSRCs as the connection leaves the connected phase (closed or failed).
    func keepFinalMediaFigures() {
        guard case .connected(let established) = phase, !established.streams.isEmpty else { return }
        finalStreams = established.streams.enumerated().map { SentStream($1, index: $0) }
    }

    /// DTLS's state in W3C's terms.
    private var dtlsTransportState: RTCDtlsTransportState {
        switch phase {
        case .new: .new
        case .connecting(let handshake): Self.w3c(handshake.dtls.state)
        case .connected(let established): Self.w3c(established.dtls.state)
        case .failed(let error): error.code == .dtlsFailed ? .failed : .closed
        case .closed: .closed
        }
    }

    private static func w3c(_ state: DTLSState) -> RTCDtlsTransportState {
        switch state {
        case .new: .new
        case .connecting: .connecting
        case .connected: .connected
        case .failed: .failed
        case .closed: .closed
        }
    }
}
