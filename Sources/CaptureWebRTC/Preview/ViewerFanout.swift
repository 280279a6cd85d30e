internal import CaptureCall
internal import CaptureCore
internal import CaptureVP8

/// The preview's one encoder feeding every viewer: an ``EncodedFrameSink`` that hands each encoded frame to the
/// current viewers' senders, in order, on the encoder thread.
///
/// Sharing the encoder is a choice: one capture and one VP8 encode serve any number of viewers (the CPU cost does not
/// grow with them), at the price of one bit rate and one key-frame schedule for all: a viewer's PLI gives everyone a
/// key frame, and the last REMB sets the rate, as a simulcast-less SFU forwarding one uplink would.
final class ViewerFanout: EncodedFrameSink {
    private let senders = Locked<[String: VideoSender]>([:])

    /// Adds a viewer's sender; frames from the next one on reach it.
    func add(_ sender: VideoSender, id: String) {
        senders.withLock { $0[id] = sender }
    }

    /// Removes a viewer's sender (finished by the caller); `nil` when there was none.
    func remove(id: String) -> VideoSender? {
        senders.withLock { $0.removeValue(forKey: id) }
    }

    /// The viewers now.
    var all: [String: VideoSender] { senders.withLock { $0 } }

    func consume(_ frame: EncodedFrame) {
        for sender in senders.withLock({ $0.values }) { sender.consume(frame) }
    }

    func finish() {
        for sender in senders.withLock({ $0.values }) { sender.finish() }
    }
}
