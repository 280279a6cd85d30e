internal import CaptureCore
internal import CaptureRTP

extension VideoSender {
    /// Answers one generic NACK: each requested packet still in the history is sent again, wrapped in RTX (RFC 4588
    /// §4: the RTX payload type, SSRC and sequence number, then the original sequence number before the original
    /// payload) when an RTX payload type is configured, else as it was. Requests older than the history or the
    /// maximum age, or for packets never sent, are counted and not served. Allocates nothing: the RTX buffer is the
    /// sender's own.
    func retransmit(_ entries: [RTCPNACKEntry]) {
        let nowNs = MonotonicClock.nowNs()
        var requested = 0
        var sent = 0
        var sentBytes = 0
        var tooOld = 0
        var unknown = 0
        var errors = 0
        wire.withLock { wire in
            guard let history = wire.history, let rtxBuffer = wire.rtxBuffer,
                let retransmission = configuration.retransmission
            else {
                requested = entries.reduce(0) { $0 + 1 + $1.lostBitmask.nonzeroBitCount }
                return
            }
            for entry in entries {
                for bit in -1..<16 where bit < 0 || entry.lostBitmask & (1 << bit) != 0 {
                    requested += 1
                    let sequenceNumber = entry.packetID &+ UInt16(bit + 1)
                    switch history.packet(
                        sequenceNumber: sequenceNumber, nowNs: nowNs, maximumAgeNs: retransmission.maximumAgeNs)
                    {
                    case .tooOld: tooOld += 1
                    case .unknown: unknown += 1
                    case .found(let original):
                        var length = Self.buildRetransmission(
                            of: original, into: rtxBuffer, retransmission: retransmission,
                            sequenceNumber: &wire.rtxSequenceNumber)
                        guard length > 0 else {
                            errors += 1
                            continue
                        }
                        if let srtp {
                            do throws(SRTPError) {
                                try srtp.protectRTP(rtxBuffer, length: &length)
                            } catch {
                                errors += 1
                                continue
                            }
                        }
                        if sendRTP(UnsafeRawBufferPointer(rebasing: rtxBuffer[0..<length])) {
                            sent += 1
                            sentBytes += length
                        } else {
                            errors += 1
                        }
                    }
                }
            }
        }
        metrics.retransmitted(sent)
        state.withLock {
            $0.statistics.nacksReceived += 1
            $0.statistics.packetsRequested += requested
            $0.statistics.retransmissions += sent
            $0.statistics.retransmittedBytes += sentBytes
            $0.statistics.retransmissionsTooOld += tooOld
            $0.statistics.retransmissionsUnknown += unknown
            $0.statistics.sendErrors += errors
        }
    }

    /// Writes the retransmission of `original` (an unprotected RTP packet) into `buffer`; returns its length.
    static func buildRetransmission(
        of original: UnsafeRawBufferPointer, into buffer: UnsafeMutableRawBufferPointer,
        retransmission: RetransmissionConfiguration, sequenceNumber: inout UInt16
    ) -> Int {
        guard let rtxPayloadType = retransmission.rtxPayloadType else {
            UnsafeMutableRawBufferPointer(rebasing: buffer[0..<original.count]).copyMemory(from: original)
            return original.count
        }
        defer { sequenceNumber &+= 1 }
        return RTXPacket.write(
            wrapping: original, into: buffer, payloadType: rtxPayloadType, ssrc: retransmission.rtxSSRC,
            sequenceNumber: sequenceNumber)
    }
}
