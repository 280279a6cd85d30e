internal import CaptureCore
internal import CaptureNet
internal import CaptureRTP
internal import CaptureVP8
internal import Foundation
internal import Logging

extension VideoReceiver {
    /// One receive thread: reads datagrams (with a short timeout, so it also serves as the report timer), handles
    /// them, and sends a receiver report when one is due (the RTP thread only).
    static func receiveLoop(_ weak: WeakReceiver, socket: UDPSocket?, isRTCPOnly: Bool = false) {
        guard let socket, let first = weak.receiver else { return }
        let (activeThreads, threadsFinished) = (first.activeThreads, first.threadsFinished)
        defer {
            // The last receive thread out lets `stop()` go on.
            let remaining = activeThreads.withLock { count in
                count -= 1
                return count
            }
            if remaining == 0 { threadsFinished.finish() }
        }
        // Room for the largest UDP datagram: longer ones would be truncated, then rejected as malformed.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
        defer { buffer.deallocate() }
        while let receiver = weak.receiver, receiver.running.withLock({ $0 }) {
            let received: (count: Int, source: SocketAddress)?
            do throws(SocketError) {
                received = try socket.receive(into: buffer, timeout: .milliseconds(50))
            } catch {
                break  // Closed.
            }
            let nowNs = MonotonicClock.nowNs()
            if let received {
                receiver.state.withLock { $0.datagrams += isRTCPOnly ? 0 : 1 }
                if isRTCPOnly || Self.isRTCP(buffer, count: received.count) {
                    receiver.handleRTCP(buffer, length: received.count, nowNs: nowNs)
                } else {
                    receiver.handleRTP(buffer, length: received.count, source: received.source, nowNs: nowNs)
                }
            }
            if !isRTCPOnly {
                receiver.sendReportIfDue(nowNs: nowNs)
                // The loop wakes at least every 50 ms: feedback leaves within that of its 100 ms deadline.
                receiver.sendTransportFeedbackIfDue(nowNs: nowNs)
            }
        }
    }

    /// RFC 5761 §4: on a multiplexed port, RTCP packet types 192…223 fall where RTP would have payload types 64…95.
    static func isRTCP(_ buffer: UnsafeMutableRawBufferPointer, count: Int) -> Bool {
        count >= 2 && (192...223).contains(buffer[1])
    }

    func handleRTP(_ buffer: UnsafeMutableRawBufferPointer, length: Int, source: SocketAddress, nowNs: UInt64) {
        let dropped = pipeline.withLock { $0.loss?.shouldDrop() ?? false }
        if dropped {
            state.withLock { $0.packetsDroppedBySimulation += 1 }
            return
        }
        var length = length
        if let srtp {
            do throws(SRTPError) {
                try srtp.unprotectRTP(buffer, length: &length)
            } catch {
                state.withLock { $0.srtpFailures += 1 }
                return
            }
        }
        let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<length])
        let header: RTPHeader
        do throws(RTPParseError) {
            header = try RTPPacket(parsing: bytes).header
        } catch {
            state.withLock { $0.malformed += 1 }
            return
        }
        guard header.payloadType == configuration.assembler.payloadType else {
            state.withLock { $0.malformed += 1 }
            return
        }
        let rtcpAddress = configuration.rtcpMux ? source : source.withPort(source.port &+ 1)
        // `nonisolated(unsafe)` is sound: the datagram buffer belongs to this receive thread, is read synchronously
        // inside the lock, and the reassembler copies what it keeps; no reference to it outlives this call.
        nonisolated(unsafe) let packet = bytes
        let update = pipeline.withLock { pipeline -> PacketUpdate? in
            if let peer = pipeline.peer, peer.ssrc != header.ssrc || peer.rtcpAddress != rtcpAddress {
                // One sender at a time: a packet from another SSRC or address while the current sender is active is
                // stray (it must neither reach the reassembler nor redirect our RTCP); after a silence the receiver
                // follows it.
                guard nowNs &- pipeline.lastPacketNs >= Self.sourceSwitchSilence.clampedNanoseconds else { return nil }
            }
            if pipeline.peer?.ssrc != header.ssrc || pipeline.peer?.rtcpAddress != rtcpAddress {
                pipeline.peer = Peer(ssrc: header.ssrc, rtcpAddress: rtcpAddress)
            }
            pipeline.receiveStatistics.update(
                sequenceNumber: header.sequenceNumber, rtpTimestamp: header.timestamp, arrivalTimeNs: nowNs,
                clockRate: 90_000)
            if let id = configuration.transportSequenceNumberExtensionID,
                let number = TransportSequenceNumberExtension.sequenceNumber(in: header, id: id)
            {
                pipeline.transportFeedback?.record(sequenceNumber: number, arrivalTimeNs: nowNs, mediaSSRC: header.ssrc)
            }
            if pipeline.firstPacketNs == nil { pipeline.firstPacketNs = nowNs }
            pipeline.lastPacketNs = nowNs
            var update = PacketUpdate()
            for event in pipeline.assembler.insert(packet, arrivalTimeNs: nowNs) {
                switch event {
                case .frame(let frame):
                    switch Self.decode(frame, in: &pipeline, logger: logger) {
                    case .success(let picture?):
                        update.decoded.append(picture)
                        if frame.isKeyFrame { update.keyFrames += 1 }
                    case .success(nil): break
                    case .failure:
                        update.decodeErrors += 1
                        update.needsPictureLossIndication = true
                    }
                case .frameDropped: break
                case .keyFrameNeeded: update.needsPictureLossIndication = true
                }
            }
            update.assembled = pipeline.assembler.statistics
            update.jitterMs = Double(pipeline.receiveStatistics.jitter) / 90
            update.seconds = Double(nowNs - (pipeline.firstPacketNs ?? nowNs)) / 1e9
            return update
        }
        guard let update else {
            state.withLock { $0.strayPackets += 1 }
            return
        }
        let decoded = update.decoded
        state.withLock { statistics in
            statistics.packets += 1
            statistics.bytes += length
            statistics.packetsLost = update.assembled.lost
            statistics.framesComplete = update.assembled.framesComplete
            statistics.framesLost = update.assembled.framesDropped
            statistics.framesReceived = update.assembled.framesComplete + update.assembled.framesDropped
            statistics.malformed = max(statistics.malformed, update.assembled.malformed)
            statistics.framesDecoded += decoded.count
            statistics.keyFramesDecoded += update.keyFrames
            statistics.decodeErrors += update.decodeErrors
            statistics.jitterMs = update.jitterMs
            statistics.bitrateKbps = update.seconds > 0 ? Double(statistics.bytes) * 8 / 1_000 / update.seconds : 0
        }
        for picture in decoded { onFrame?(picture) }
        if update.needsPictureLossIndication { sendPictureLossIndication() }
    }

    /// What one accepted packet changed, gathered under the pipeline lock and published after it.
    struct PacketUpdate {
        var assembled = VP8ReceiverStatistics()
        var decoded: [VideoFrame] = []
        var keyFrames = 0
        var decodeErrors = 0
        var jitterMs = 0.0
        var seconds = 0.0
        var needsPictureLossIndication = false
    }

    /// Decodes one complete frame and appends it to the IVF file. A frame the decoder rejects is counted; the
    /// receiver then asks for a key frame.
    static func decode(
        _ frame: AssembledFrame, in pipeline: inout Pipeline, logger: Logger
    ) -> Result<VideoFrame?, CaptureError> {
        let buffer: VideoFrameBuffer?
        do throws(CaptureError) {
            buffer = try pipeline.decoder.decode(frame.bytes)
        } catch {
            logger.debug("VP8 frame rejected by the decoder", metadata: ["error": "\(error)"])
            return .failure(error)
        }
        guard let buffer else { return .success(nil) }
        let dimensions = Dimensions(width: buffer.width, height: buffer.height)
        if pipeline.writer == nil, !pipeline.writerFailed, let path = pipeline.outputPath {
            do throws(CaptureError) {
                pipeline.writer = try IVFWriter(path: path, dimensions: dimensions)
            } catch {
                logger.warning("IVF output cannot be created", metadata: ["error": "\(error)"])
                pipeline.writerFailed = true
            }
        }
        if let writer = pipeline.writer {
            let encoded = EncodedFrame(
                bytes: frame.bytes, isKeyFrame: frame.isKeyFrame, rtpTimestamp: frame.rtpTimestamp,
                captureTimeNs: frame.arrivalTimeNs, rotation: frame.rotation, dimensions: dimensions, qp: 0)
            do throws(CaptureError) {
                try writer.write(encoded)
            } catch {
                logger.warning("IVF output failed; no more frames are written", metadata: ["error": "\(error)"])
                pipeline.writer = nil
                pipeline.writerFailed = true
            }
        }
        return .success(VideoFrame(buffer: buffer, rotation: frame.rotation, timestampNs: frame.arrivalTimeNs))
    }
}
