import CaptureICE
import CaptureNet
import Testing

/// RFC 5769's test vectors, and robustness of the parser against truncated and corrupted input.
@Suite struct STUNMessageTests {
    static let password = "VOkJxbRl1RmTxUk/WvJxBt"

    /// RFC 5769 §2.1: a Binding request with SOFTWARE, PRIORITY, ICE-CONTROLLED, USERNAME, MESSAGE-INTEGRITY,
    /// FINGERPRINT (short-term credentials).
    static let sampleRequest = bytes(
        """
        000100582112a442b7e7a701bc34d686fa87dfae802200105354554e20746573742063\
        6c69656e74002400046e0001ff80290008932ff9b151263b36000600096576746a3a68\
        36765920202000080014\
        9aeaa70cbfd8cb56781ef2b5b2d3f249c1b571a280280004e57a3bcf
        """)

    /// RFC 5769 §2.2: a Binding success response with XOR-MAPPED-ADDRESS 192.0.2.1:32853.
    static let sampleIPv4Response = bytes(
        """
        0101003c2112a442b7e7a701bc34d686fa87dfae8022000b7465737420766563746f72\
        2000200008 0001a147e112a643000800142b91f599fd9e90c38c7489f92af9ba53f06b\
        e7d780280004c07d4c96
        """)

    /// RFC 5769 §2.3: a Binding success response with XOR-MAPPED-ADDRESS
    /// [2001:db8:1234:5678:11:2233:4455:6677]:32853.
    static let sampleIPv6Response = bytes(
        """
        010100482112a442b7e7a701bc34d686fa87dfae8022000b7465737420766563746f72\
        20002000140002a1470113a9faa5d3f179bc25f4b5bed2b9d900080014a382954e4be6\
        7bf11784c97c8292c275bfe3ed4180280004c8fb0b4c
        """)

    static func bytes(_ hex: String) -> [UInt8] {
        let digits = hex.filter(\.isHexDigit)
        var result: [UInt8] = []
        var index = digits.startIndex
        while index < digits.endIndex {
            let next = digits.index(index, offsetBy: 2)
            result.append(UInt8(digits[index..<next], radix: 16) ?? 0)
            index = next
        }
        return result
    }

    static func verify(
        _ bytes: [UInt8], password: String
    ) -> (STUNMessageIntegrity.Verdict, STUNMessageIntegrity.Verdict) {
        bytes.withUnsafeBytes { raw in
            (
                STUNMessageIntegrity.verifyIntegrity(raw, key: STUNMessageIntegrity.key(password: password)),
                STUNMessageIntegrity.verifyFingerprint(raw)
            )
        }
    }

    @Test func sampleRequestParsesAndVerifies() throws {
        #expect(Self.sampleRequest.count == 108)
        let message = try STUNMessage(parsing: Self.sampleRequest)
        #expect(message.messageClass == .request)
        #expect(message.method == STUNMessage.binding)
        #expect(message.transactionID.description == "b7e7a701bc34d686fa87dfae")
        #expect(message.username == "evtj:h6vY")
        #expect(message.priority == 0x6E00_01FF)
        #expect(message.iceControlled == 0x932F_F9B1_5126_3B36)
        #expect(message.iceControlling == nil)
        #expect(message.attributes.first == .unknown(type: 0x8022, value: Array("STUN test client".utf8)))
        let (integrity, fingerprint) = Self.verify(Self.sampleRequest, password: Self.password)
        #expect(integrity == .valid)
        #expect(fingerprint == .valid)
        #expect(Self.verify(Self.sampleRequest, password: "wrong").0 == .invalid)
    }

    @Test func ipv4ResponseParsesAndVerifies() throws {
        let message = try STUNMessage(parsing: Self.sampleIPv4Response)
        #expect(message.messageClass == .successResponse)
        #expect(message.mappedAddress == (try SocketAddress("192.0.2.1:32853")))
        let (integrity, fingerprint) = Self.verify(Self.sampleIPv4Response, password: Self.password)
        #expect(integrity == .valid)
        #expect(fingerprint == .valid)
    }

    @Test func ipv6ResponseParsesAndVerifies() throws {
        let message = try STUNMessage(parsing: Self.sampleIPv6Response)
        #expect(message.messageClass == .successResponse)
        #expect(message.mappedAddress == (try SocketAddress("[2001:db8:1234:5678:11:2233:4455:6677]:32853")))
        let (integrity, fingerprint) = Self.verify(Self.sampleIPv6Response, password: Self.password)
        #expect(integrity == .valid)
        #expect(fingerprint == .valid)
    }

    /// The vectors pad SOFTWARE with a space where we pad with zero, so a rebuilt response differs from the vector
    /// only in that byte, MESSAGE-INTEGRITY and FINGERPRINT; it carries the same attributes and verifies.
    @Test func rebuiltResponsesVerify() throws {
        let key = STUNMessageIntegrity.key(password: Self.password)
        for vector in [Self.sampleIPv4Response, Self.sampleIPv6Response] {
            let parsed = try STUNMessage(parsing: vector)
            let rebuilt = parsed.serialized(integrityKey: key, fingerprint: true)
            #expect(rebuilt.count == vector.count)
            #expect(rebuilt[0..<35] == vector[0..<35])
            #expect(rebuilt[36..<(vector.count - 32)] == vector[36..<(vector.count - 32)])
            #expect(Self.verify(rebuilt, password: Self.password) == (.valid, .valid))
            #expect(try STUNMessage(parsing: rebuilt).attributes.dropLast(2) == parsed.attributes.dropLast(2))
        }
    }

    @Test func roundTripsICEAttributes() throws {
        let id = STUNTransactionID.random()
        let address = try SocketAddress("[2001:db8::7]:3478")
        let message = STUNMessage(
            .request, transactionID: id,
            attributes: [
                .username("abcd:efgh"), .priority(0x6E7F_00FF), .iceControlling(0x0102_0304_0506_0708), .useCandidate,
                .xorMappedAddress(address), .errorCode(code: 487, reason: "Role Conflict"),
            ])
        let key = STUNMessageIntegrity.key(password: "0123456789012345678901")
        let bytes = message.serialized(integrityKey: key, fingerprint: true)
        let parsed = try STUNMessage(parsing: bytes)
        #expect(parsed.transactionID == id)
        #expect(parsed.username == "abcd:efgh")
        #expect(parsed.priority == 0x6E7F_00FF)
        #expect(parsed.iceControlling == 0x0102_0304_0506_0708)
        #expect(parsed.useCandidate)
        #expect(parsed.mappedAddress == address)
        #expect(parsed.errorCode == 487)
        #expect(bytes.withUnsafeBytes { STUNMessageIntegrity.verifyIntegrity($0, key: key) } == .valid)
        #expect(bytes.withUnsafeBytes { STUNMessageIntegrity.verifyFingerprint($0) } == .valid)
        var buffer = [UInt8](repeating: 0, count: 256)
        let written = buffer.withUnsafeMutableBytes {
            message.serialize(into: $0, integrityKey: key, fingerprint: true)
        }
        #expect(written == bytes.count)
        var tiny = [UInt8](repeating: 0, count: 16)
        #expect(tiny.withUnsafeMutableBytes { message.serialize(into: $0) } == nil)
    }

    @Test func classesRoundTrip() throws {
        for messageClass in [STUNMessage.Class.request, .indication, .successResponse, .errorResponse] {
            let bytes = STUNMessage(messageClass).serialized()
            #expect(try STUNMessage(parsing: bytes).messageClass == messageClass)
        }
        #expect(STUNMessage(.successResponse).serialized()[0...1] == [0x01, 0x01])
        #expect(STUNMessage(.errorResponse).serialized()[0...1] == [0x01, 0x11])
    }

    @Test func typedErrors() {
        #expect(throws: STUNParseError.tooShort(count: 0)) { try STUNMessage(parsing: [UInt8]()) }
        #expect(throws: STUNParseError.notSTUN) { try STUNMessage(parsing: [UInt8](repeating: 0x80, count: 20)) }
        var badCookie = Self.sampleRequest
        badCookie[4] = 0
        #expect(throws: STUNParseError.badMagicCookie(0x0012_A442)) { try STUNMessage(parsing: badCookie) }
        var misaligned = Self.sampleRequest
        misaligned[3] = 0x57
        #expect(throws: STUNParseError.misalignedLength(0x57)) { try STUNMessage(parsing: misaligned) }
        #expect(throws: STUNParseError.lengthMismatch(declared: 0x58, available: 0x54)) {
            try STUNMessage(parsing: Array(Self.sampleRequest.dropLast(4)))
        }
        var badPriority = Self.sampleRequest
        badPriority[43] = 3  // PRIORITY's length 4 → 3
        #expect(throws: STUNParseError.malformedAttribute(type: 0x0024)) { try STUNMessage(parsing: badPriority) }
    }

    /// Every truncation and every single-byte corruption of the vectors parses or throws; never traps.
    @Test func truncatedAndCorruptedInputNeverTraps() {
        for vector in [Self.sampleRequest, Self.sampleIPv4Response, Self.sampleIPv6Response] {
            for length in 0..<vector.count {
                #expect(throws: STUNParseError.self) { try STUNMessage(parsing: Array(vector.prefix(length))) }
                _ = Self.verify(Array(vector.prefix(length)), password: Self.password)
            }
            for index in vector.indices {
                for flip: UInt8 in [0x01, 0x80, 0xFF] {
                    var corrupted = vector
                    corrupted[index] ^= flip
                    _ = try? STUNMessage(parsing: corrupted)
                    let (integrity, fingerprint) = Self.verify(corrupted, password: Self.password)
                    #expect(integrity != .valid || fingerprint != .valid)
                }
            }
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let count = Int.random(in: 0..<80, using: &generator)
            var garbage = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if garbage.count >= 8 { garbage.replaceSubrange(4..<8, with: [0x21, 0x12, 0xA4, 0x42]) }
            if !garbage.isEmpty { garbage[0] &= 0x3F }
            _ = try? STUNMessage(parsing: garbage)
            _ = Self.verify(garbage, password: Self.password)
        }
    }
}
