import Synchronization

/// Frames as an asynchronous sequence. Keeps only the newest few frames when the consumer is slow, and counts what it
/// dropped. Ends when capture stops.
public struct VideoFrameStream: AsyncSequence, Sendable {
    /// Each element is a captured frame.
    public typealias Element = VideoFrame

    let stream: AsyncStream<VideoFrame>
    let drops: DropCounter

    /// Frames discarded because the consumer fell behind.
    public var droppedFrames: Int { drops.value }

    /// An iterator over the frames; it ends when capture stops.
    public func makeAsyncIterator() -> AsyncStream<VideoFrame>.Iterator { stream.makeAsyncIterator() }
}

/// A thread-safe counter shared by a stream and its producer.
final class DropCounter: Sendable {
    private let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .relaxed) }
    func increment() { count.add(1, ordering: .relaxed) }
}
