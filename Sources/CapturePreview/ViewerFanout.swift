internal import CaptureCall
internal import CaptureCore
internal import CaptureVP8
internal import CaptureWebRTC

/// The preview's one encoder feeding every viewer: an ``EncodedFrameSink`` that hands each encoded frame to the
/// current viewers' transports, in order, on the encoder thread (each queues it for its own driver thread).
///
/// Sharing the encoder is a choice: one capture and one VP8 encode serve any number of viewers (the CPU cost does not
/// grow with them), at the price of one bit rate and one key-frame schedule for all: a viewer's PLI gives everyone a
/// key frame, and the last REMB sets the rate, as a simulcast-less SFU forwarding one uplink would.
final class ViewerFanout: EncodedFrameSink {
    private let senders = Locked<[String: WebRTCTransport]>([:])

    /// Adds a viewer's transport; frames from the next one on reach it.
    func add(_ transport: WebRTCTransport, id: String) {
        senders.withLock { $0[id] = transport }
    }

    /// Removes a viewer's transport (closed by the caller); `nil` when there was none.
    func remove(id: String) -> WebRTCTransport? {
        senders.withLock { $0.removeValue(forKey: id) }
    }

    /// The viewers now.
    var all: [String: WebRTCTransport] { senders.withLock { $0 } }

    func consume(_ frame: EncodedFrame) {
        for sender in senders.withLock({ $0.values }) { sender.consume(frame) }
    }

    func finish() {
        for sender in senders.withLock({ $0.values }) { sender.finish() }
    }
}
