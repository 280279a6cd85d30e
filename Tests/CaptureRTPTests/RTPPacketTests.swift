import Testing

@testable import CaptureRTP

@Suite("RTP packet parsing")
struct RTPPacketTests {
    private func parse(_ bytes: [UInt8]) throws -> RTPPacket {
        try bytes.withUnsafeBytes { raw in try RTPPacket(parsing: raw) }
    }

    private let base: [UInt8] = [0x80, 0xE0, 0x12, 0x34, 0, 0, 0x30, 0x39, 0xDE, 0xAD, 0xBE, 0xEF]

    @Test("the fixed header, CSRCs and payload")
    func fixedHeader() throws {
        var bytes = base
        bytes[0] = 0x82  // two CSRCs
        bytes += [0, 0, 0, 1, 0, 0, 0, 2, 0xAA, 0xBB]
        let packet = try parse(bytes)
        #expect(packet.header.marker)
        #expect(packet.header.payloadType == 96)
        #expect(packet.header.sequenceNumber == 0x1234)
        #expect(packet.header.timestamp == 12345)
        #expect(packet.header.ssrc == 0xDEAD_BEEF)
        #expect(packet.header.csrcs == [1, 2])
        #expect(packet.payloadRange == 20..<22)
    }

    @Test("one-byte extension elements, with padding bytes and the stop ID")
    func oneByteExtension() throws {
        var bytes = base
        bytes[0] = 0x90
        // 0xBEDE, 3 words: id 1 len 1 [0x05], pad, id 2 len 2 [0x0A 0x0B], pad, id 15 stop, junk...
        bytes += [0xBE, 0xDE, 0, 3, 0x10, 0x05, 0x00, 0x21, 0x0A, 0x0B, 0x00, 0xF0, 0x99, 0x99, 0x99, 0x99, 0x77]
        let packet = try parse(bytes)
        #expect(packet.header.extensionForm == .oneByte)
        #expect(packet.extensionElement(id: 1)?.data == [0x05])
        #expect(packet.extensionElement(id: 2)?.data == [0x0A, 0x0B])
        #expect(packet.header.extensionElements.count == 2)
        #expect(packet.payloadRange == 28..<29)
    }

    @Test("two-byte extension elements, including an empty one")
    func twoByteExtension() throws {
        var bytes = base
        bytes[0] = 0x90
        bytes += [0x10, 0x00, 0, 2, 200, 3, 1, 2, 3, 7, 0, 0, 0x77]
        let packet = try parse(bytes)
        #expect(packet.header.extensionForm == .twoByte)
        #expect(packet.extensionElement(id: 200)?.data == [1, 2, 3])
        #expect(packet.extensionElement(id: 7)?.data == [])
        #expect(packet.payloadRange == 24..<25)
    }

    @Test("padding is removed from the payload")
    func padding() throws {
        var bytes = base
        bytes[0] = 0xA0
        bytes += [0x55, 0x66, 0, 0, 3]
        let packet = try parse(bytes)
        #expect(packet.header.paddingLength == 3)
        #expect(packet.payloadRange == 12..<14)
    }

    @Test("hostile headers give typed errors")
    func hostile() {
        #expect(throws: RTPParseError.truncatedHeader(length: 11)) { try parse(Array(base.prefix(11))) }
        var version = base
        version[0] = 0x40
        #expect(throws: RTPParseError.unsupportedVersion(1)) { try parse(version) }
        var csrc = base
        csrc[0] = 0x8F
        #expect(throws: RTPParseError.csrcPastEnd(count: 15, length: 12)) { try parse(csrc) }
        var extensionHeader = base
        extensionHeader[0] = 0x90
        extensionHeader += [0xBE, 0xDE]
        #expect(throws: RTPParseError.extensionPastEnd(declaredBytes: 4, available: 2)) {
            try parse(extensionHeader)
        }
        var extensionLength = base
        extensionLength[0] = 0x90
        extensionLength += [0xBE, 0xDE, 0xFF, 0xFF, 0x10]
        #expect(throws: RTPParseError.extensionPastEnd(declaredBytes: 4 * 0xFFFF, available: 1)) {
            try parse(extensionLength)
        }
        var element = base
        element[0] = 0x90
        element += [0xBE, 0xDE, 0, 1, 0x1F, 0, 0, 0]
        #expect(throws: RTPParseError.extensionElementPastEnd(id: 1)) { try parse(element) }
        var padding = base
        padding[0] = 0xA0
        padding += [1, 2, 200]
        #expect(throws: RTPParseError.invalidPadding(count: 200, available: 3)) { try parse(padding) }
        var zeroPadding = base
        zeroPadding[0] = 0xA0
        zeroPadding += [0]
        #expect(throws: RTPParseError.invalidPadding(count: 0, available: 1)) { try parse(zeroPadding) }
    }

    @Test("VP8 payload descriptors round-trip in every form")
    func descriptorRoundTrip() throws {
        let descriptors = [
            VP8PayloadDescriptor(isStartOfPartition: true),
            VP8PayloadDescriptor(isNonReference: true, isStartOfPartition: false, partitionID: 5),
            VP8PayloadDescriptor(isStartOfPartition: true, pictureID: 0x7F, pictureIDIsLong: false),
            VP8PayloadDescriptor(isStartOfPartition: true, pictureID: 0x7FFF, pictureIDIsLong: true),
            VP8PayloadDescriptor(
                isStartOfPartition: true, pictureID: 300, pictureIDIsLong: true, tl0PictureIndex: 9,
                temporalLayerIndex: 2,
                isLayerSync: true, keyIndex: 17),
            VP8PayloadDescriptor(isStartOfPartition: false, keyIndex: 31),
            VP8PayloadDescriptor(isStartOfPartition: false, tl0PictureIndex: 255),
        ]
        for descriptor in descriptors {
            var buffer = [UInt8](repeating: 0, count: 8)
            let written = buffer.withUnsafeMutableBytes { descriptor.write(to: $0) }
            #expect(written == descriptor.encodedSize)
            buffer[written] = 0x42  // one byte of VP8 data
            let (parsed, size) = try buffer.withUnsafeBytes { try VP8PayloadDescriptor.parse($0) }
            #expect(size == written)
            #expect(parsed == descriptor)
        }
    }

    @Test("VP8 descriptors cut short or without data are rejected")
    func descriptorTruncated() {
        for bytes: [UInt8] in [[], [0x10], [0x90], [0x90, 0x80], [0x90, 0x80, 0x80, 0x01], [0x90, 0x40, 3]] {
            #expect(throws: RTPParseError.truncatedPayloadDescriptor(length: bytes.count)) {
                try bytes.withUnsafeBytes { try VP8PayloadDescriptor.parse($0) }
            }
        }
    }

    @Test("sequence numbers unwrap across 65535 → 0 in both directions")
    func unwrap() {
        var unwrapper = SequenceNumberUnwrapper()
        let values = [65534, 65535, 0, 65533, 1, 2].map { unwrapper.unwrap(UInt16($0)) }
        let base = values[0]
        #expect(values.map { $0 - base } == [0, 1, 2, -1, 3, 4])
    }
}
