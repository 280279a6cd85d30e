internal import CaptureCore
internal import CaptureRTP
package import CaptureVP8

/// What a paced packet is, for ``RTPSendSession/transmit(_:length:kind:probeClusterID:nowNs:output:)``.
package enum PacedPacketKind: Sendable, Hashable {
    /// A first transmission of media, from ``RTPSendSession/packetize(_:nowNs:enqueue:)``.
    case media
    /// An RTX copy (or a resent original) answering a NACK.
    case retransmission
    /// A padding-only packet from ``RTPSendSession/writePadding(into:size:)``, for a probe.
    case padding
}

extension RTPSendSession {
    // MARK: Paced sending

    /// Packetizes `frame` and stores each packet in the retransmission history, then hands it to `enqueue`
    /// unprotected, without its transport-wide number (both come when it leaves: a pacer decides when). `enqueue`
    /// returns `false` when it cannot take the packet (counted in ``VideoSenderStatistics/pacerRefused``; the peer's
    /// NACK may still recover it from the history).
    ///
    /// The owner later hands each packet, in whatever order its pacer chose, to
    /// ``transmit(_:length:kind:probeClusterID:nowNs:output:)``. Allocates nothing per packet.
    package func packetize(_ frame: EncodedFrame, nowNs: UInt64, enqueue: (UnsafeRawBufferPointer) -> Bool) {
        var refused = 0
        forEachPacket(of: frame, nowNs: nowNs) { packet in
            if !enqueue(packet.bytes) { refused += 1 }
        }
        counters.frames += 1
        counters.pacerRefused += refused
        if frame.isKeyFrame { counters.keyFramesSent += 1 }
        pacedFrameIsKey = frame.isKeyFrame
    }

    /// Sends one paced packet, unprotected in `buffer[0..<length]` (the buffer has room for the SRTP trailer after
    /// it): writes the next transport-wide number into it (when the stream numbers its packets), protects it in
    /// place, hands it to `output`, and records it (with `probeClusterID`, for the estimator's probe results) once it
    /// went out. Whether it did.
    ///
    /// Counted by `kind`: media in the stream's packets and bytes (and, at the last packet of a frame, the frame's
    /// glass-to-wire latency, from its RTP timestamp on the capture clock); retransmissions and padding in their own
    /// figures. A simulated first-transmission loss (``VideoSenderConfiguration/firstTransmissionLoss``) drops media
    /// here, after numbering, so that the feedback reports it lost. Allocates nothing.
    @discardableResult
    package func transmit(
        _ buffer: UnsafeMutableRawBufferPointer, length: Int, kind: PacedPacketKind, probeClusterID: Int?,
        nowNs: UInt64, output: (UnsafeRawBufferPointer) -> Bool
    ) -> Bool {
        guard length >= RTPHeader.fixedSize, length <= buffer.count else {
            counters.sendErrors += 1
            return false
        }
        let packet = UnsafeRawBufferPointer(rebasing: buffer[0..<length])
        let numbered = transportWide?.stamp(packet: buffer, length: length) == true
        let packetSSRC = Self.loadUInt32(packet, at: 8)
        let isLastOfFrame = kind == .media && packet[1] & 0x80 != 0
        let timestamp = Self.loadUInt32(packet, at: 4)
        let payloadLength = length - (RTPHeader.length(of: packet) ?? length)
        let cluster = probeClusterID.map { Int32(truncatingIfNeeded: $0) }
        func recordNumber() {
            guard numbered else { return }
            transportWide?.sent(
                size: length, ssrc: packetSSRC, isRetransmission: kind == .retransmission, nowNs: nowNs,
                probeClusterID: cluster)
        }
        if kind == .media, loss?.shouldDrop() == true {
            recordNumber()
            counters.firstTransmissionsDropped += 1
            return true
        }
        var protectedLength = length
        if let srtp {
            do throws(SRTPError) {
                try srtp.protectRTP(buffer, length: &protectedLength)
            } catch {
                counters.sendErrors += 1
                metrics.frame(packets: 0, bytes: 0, errors: 1, isKeyFrame: false, latencyNs: 0)
                return false
            }
        }
        guard output(UnsafeRawBufferPointer(rebasing: buffer[0..<protectedLength])) else {
            counters.sendErrors += 1
            return false
        }
        recordNumber()
        switch kind {
        case .media:
            counters.packets += 1
            counters.bytes += protectedLength
            counters.overheadBytes += protectedLength - payloadLength
            pacedFramePackets += 1
            pacedFrameBytes += protectedLength
            if isLastOfFrame {
                // The capture clock's 90 kHz ticks now, less the frame's: its time from glass to wire.
                let ticks = EncodedFrame.rtpTimestamp(fromNanoseconds: nowNs) &- timestamp
                let latencyNs = UInt64(ticks) * 100_000 / 9
                latency.record(nanoseconds: latencyNs)
                metrics.frame(
                    packets: pacedFramePackets, bytes: pacedFrameBytes, errors: 0, isKeyFrame: pacedFrameIsKey,
                    latencyNs: latencyNs)
                pacedFramePackets = 0
                pacedFrameBytes = 0
            }
        case .retransmission:
            counters.retransmissions += 1
            counters.retransmittedBytes += protectedLength
            metrics.retransmitted(1)
        case .padding:
            counters.paddingPackets += 1
            counters.paddingBytes += protectedLength
        }
        return true
    }

    /// Writes a padding-only packet of about `size` bytes (RTP, before SRTP) on the RTX stream into `buffer`: the
    /// header (with the transport-wide element when the stream numbers its packets) and up to
    /// ``RTPPaddingPacket/maximumPaddingLength`` bytes of padding. Returns its length, or 0 when the stream has no
    /// RTX stream to pad on (padding on the media stream would take its sequence numbers) or `buffer` is too small.
    /// Send it with ``transmit(_:length:kind:probeClusterID:nowNs:output:)`` as ``PacedPacketKind/padding``.
    ///
    /// A simulcast layer's padding (the packetizer sends a rid and has a repaired-rid id) also carries the mid and
    /// the repaired rid (RFC 8852 §3.2) until the peer reports on the RTX SSRC, since the receiver was told no RTX
    /// SSRC: without them Janus drops the probe before counting it for transport-wide feedback. A single stream's
    /// padding is as before (its RTX SSRC is in `a=ssrc-group:FID`). Allocates nothing.
    package func writePadding(into buffer: UnsafeMutableRawBufferPointer, size: Int) -> Int {
        guard let retransmission = configuration.retransmission, let payloadType = retransmission.rtxPayloadType
        else { return 0 }
        let id = transportWide?.extensionID
        let layer = packetizer.configuration
        // Until the peer reports on the RTX SSRC (then it has bound it).
        let repairedRidID = counters.rtxSSRCAcknowledged ? nil : layer.repairedRidExtensionID
        let midID = repairedRidID == nil ? nil : layer.midExtensionID
        let header = RTPPaddingPacket.headerLength(
            transportWideID: id, midID: midID, mid: layer.mid, repairedRidID: repairedRidID, rid: layer.rid)
        let reserve = max(0, buffer.count - configuration.packetizer.trailerCapacity)
        let length = RTPPaddingPacket.write(
            into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<reserve]), payloadType: payloadType,
            ssrc: retransmission.rtxSSRC, sequenceNumber: rtxSequenceNumber,
            timestamp: packetizer.lastRTPTimestamp, transportWideID: id, paddingLength: size - header, midID: midID,
            mid: layer.mid, repairedRidID: repairedRidID, rid: layer.rid)
        if length > 0 { rtxSequenceNumber &+= 1 }
        return length
    }

    /// The big-endian word at `offset` (the caller checked the bounds).
    private static func loadUInt32(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
            | UInt32(bytes[offset + 3])
    }
}
