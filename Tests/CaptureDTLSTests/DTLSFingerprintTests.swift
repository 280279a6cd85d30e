import CaptureDTLS
import Foundation
import Testing

@Suite struct DTLSFingerprintTests {
    static let sample = "sha-256 " + (0..<32).map { String(format: "%02X", $0 * 7 & 0xFF) }.joined(separator: ":")

    @Test func parseRenderRoundTrip() throws {
        let fingerprint = try DTLSFingerprint(sdpValue: Self.sample)
        #expect(fingerprint.algorithm == "sha-256")
        #expect(fingerprint.bytes == (0..<32).map { UInt8($0 * 7 & 0xFF) })
        #expect(fingerprint.sdpValue == Self.sample)
        #expect(try DTLSFingerprint(sdpValue: fingerprint.sdpValue) == fingerprint)
    }

    @Test func parseIsCaseInsensitiveAndRendersUppercase() throws {
        let lower = try DTLSFingerprint(sdpValue: "  SHA-256 " + Self.sample.dropFirst(8).lowercased() + " ")
        #expect(lower == (try DTLSFingerprint(sdpValue: Self.sample)))
        #expect(lower.sdpValue == Self.sample)
    }

    @Test func codableAsTheSDPString() throws {
        let fingerprint = try DTLSFingerprint(sdpValue: Self.sample)
        let data = try JSONEncoder().encode([fingerprint])
        #expect(String(decoding: data, as: UTF8.self) == "[\"\(Self.sample)\"]")
        #expect(try JSONDecoder().decode([DTLSFingerprint].self, from: data) == [fingerprint])
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([DTLSFingerprint].self, from: Data("[\"sha-256 XY\"]".utf8))
        }
    }

    static let bad: [String] = [
        "",
        "sha-256",
        "sha-256 ",
        "md5 AB:CD",
        "sha-256 AB:CD",  // too short
        Self.sample + ":00",  // too long
        Self.sample.replacingOccurrences(of: ":", with: ""),
        Self.sample.replacingOccurrences(of: "00:", with: "0:"),
        Self.sample.replacingOccurrences(of: "00:", with: "ZZ:"),
        Self.sample.replacingOccurrences(of: "00:", with: ":"),
        Self.sample.replacingOccurrences(of: "00:", with: "+0:"),
        Self.sample + " extra",
        "sha-256 " + String(repeating: "AB:", count: 10_000),
    ]

    @Test(arguments: bad)
    func badInputsThrowTypedErrors(text: String) {
        #expect {
            try DTLSFingerprint(sdpValue: text)
        } throws: { error in
            guard case DTLSError.invalidFingerprint = error else { return false }
            return true
        }
    }

    @Test func otherHashLengthsAreChecked() throws {
        #expect(try DTLSFingerprint(algorithm: "SHA-1", bytes: Array(repeating: 1, count: 20)).algorithm == "sha-1")
        #expect(throws: DTLSError.self) {
            try DTLSFingerprint(algorithm: "sha-1", bytes: Array(repeating: 1, count: 32))
        }
    }

    @Test func setupRoleMapping() {
        #expect(DTLSRole.offerSetup == "actpass")
        #expect(DTLSRole(answerSetup: "active") == .server)
        #expect(DTLSRole(answerSetup: "PASSIVE") == .client)
        #expect(DTLSRole(answerSetup: "actpass") == nil)
        #expect(DTLSRole(answerSetup: "holdconn") == nil)
        #expect(DTLSRole.client.setupValue == "active")
        #expect(DTLSRole.server.setupValue == "passive")
    }

    @Test func certificateFingerprintIsSHA256AndFresh() throws {
        let one = try DTLSCertificate()
        let two = try DTLSCertificate()
        #expect(one.fingerprint.algorithm == "sha-256")
        #expect(one.fingerprint.bytes.count == 32)
        #expect(one.fingerprint != two.fingerprint)
    }
}
