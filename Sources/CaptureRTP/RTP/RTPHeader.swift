/// The fixed RTP header (RFC 3550 §5.1) with its CSRC list and RFC 8285 header-extension elements.
public struct RTPHeader: Sendable, Hashable, Codable {
    /// The size of the fixed header in bytes.
    public static let fixedSize = 12

    /// The marker bit (for video: the last packet of a frame).
    public var marker: Bool
    /// The 7-bit payload type.
    public var payloadType: UInt8
    /// The 16-bit sequence number.
    public var sequenceNumber: UInt16
    /// The RTP timestamp (90 kHz for video).
    public var timestamp: UInt32
    /// The synchronization source.
    public var ssrc: UInt32
    /// Contributing sources (at most 15).
    public var csrcs: [UInt32]
    /// The number of padding bytes at the end of the packet (0 when the P bit is clear).
    public var paddingLength: Int
    /// The header extension's form, or `nil` when the X bit is clear.
    public var extensionForm: RTPHeaderExtensionForm?
    /// The header-extension elements (one-byte or two-byte form; empty for other profiles).
    public var extensionElements: [RTPHeaderExtensionElement]

    /// Creates a header.
    public init(
        marker: Bool = false, payloadType: UInt8, sequenceNumber: UInt16, timestamp: UInt32, ssrc: UInt32,
        csrcs: [UInt32] = [], paddingLength: Int = 0, extensionForm: RTPHeaderExtensionForm? = nil,
        extensionElements: [RTPHeaderExtensionElement] = []
    ) {
        self.marker = marker
        self.payloadType = payloadType
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.ssrc = ssrc
        self.csrcs = csrcs
        self.paddingLength = paddingLength
        self.extensionForm = extensionForm
        self.extensionElements = extensionElements
    }

    /// The first element with `id`, if the header carries one.
    public func extensionElement(id: UInt8) -> RTPHeaderExtensionElement? {
        extensionElements.first { $0.id == id }
    }
}
