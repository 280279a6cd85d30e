/// One RFC 8285 header-extension element: a local identifier and its bytes.
public struct RTPHeaderExtensionElement: Sendable, Hashable, Codable {
    /// The local identifier (1...14 in the one-byte form, 1...255 in the two-byte form).
    public var id: UInt8
    /// The element's data.
    public var data: [UInt8]

    /// Creates an element.
    public init(id: UInt8, data: [UInt8]) {
        self.id = id
        self.data = data
    }
}

/// The RFC 8285 form a header extension block uses.
public enum RTPHeaderExtensionForm: Sendable, Hashable, Codable {
    /// Profile 0xBEDE: one byte of ID (4 bits) and length-1 (4 bits) per element, up to 16 data bytes.
    case oneByte
    /// Profile 0x100X: one byte of ID and one byte of length per element, up to 255 data bytes.
    case twoByte
    /// Another profile (RFC 3550 generic extension); its elements are not interpreted.
    case other(profile: UInt16)

    /// The one-byte form's profile value.
    public static let oneByteProfile: UInt16 = 0xBEDE
    /// The two-byte form's profile value (the low 4 bits are application bits).
    public static let twoByteProfile: UInt16 = 0x1000
}
