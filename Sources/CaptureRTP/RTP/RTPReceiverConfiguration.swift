/// How a ``VP8FrameAssembler`` receives a stream.
public struct RTPReceiverConfiguration: Sendable, Hashable, Codable {
    /// The payload type carrying VP8; packets with another payload type are counted and ignored.
    public var payloadType: UInt8
    /// How many packets past a gap the assembler waits for the missing packets before declaring them lost.
    public var reorderWindow: Int
    /// How long (in arrival time) packets after a gap wait for the missing ones before they are declared lost.
    public var maxReorderDelay: Duration
    /// The shortest interval between two ``VP8FrameAssembler/Event/keyFrameNeeded`` events while waiting for a key
    /// frame.
    public var keyFrameRequestInterval: Duration
    /// The RFC 8285 extension ID of the CVO video-orientation extension, or `nil` to ignore orientation.
    public var videoOrientationExtensionID: UInt8?

    /// Creates a configuration.
    public init(
        payloadType: UInt8 = 96, reorderWindow: Int = 128, maxReorderDelay: Duration = .milliseconds(100),
        keyFrameRequestInterval: Duration = .milliseconds(250), videoOrientationExtensionID: UInt8? = nil
    ) {
        self.payloadType = payloadType
        self.reorderWindow = reorderWindow
        self.maxReorderDelay = maxReorderDelay
        self.keyFrameRequestInterval = keyFrameRequestInterval
        self.videoOrientationExtensionID = videoOrientationExtensionID
    }
}
