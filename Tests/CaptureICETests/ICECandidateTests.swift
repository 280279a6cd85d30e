import CaptureICE
import CaptureNet
import Testing

@Suite struct ICECandidateTests {
    @Test func priorityFormula() {
        #expect(ICECandidate.priority(kind: .host, localPreference: 65535) == 2_130_706_431)
        #expect(ICECandidate.priority(kind: .srflx, localPreference: 65535) == 1_694_498_815)
        #expect(ICECandidate.priority(kind: .prflx, localPreference: 0, component: 2) == 110 << 24 | 254)
        #expect(ICECandidate.priority(kind: .relay, localPreference: 1) == 256 + 255)
    }

    @Test func parsesHostAndRendersBack() throws {
        let text = "candidate:3521484545 1 udp 2122260223 192.168.1.20 54321 typ host generation 0 ufrag abcd"
        let candidate = try ICECandidate(parsing: "a=" + text)
        #expect(candidate.foundation == "3521484545")
        #expect(candidate.component == 1)
        #expect(candidate.transport == .udp)
        #expect(candidate.isUsable)
        #expect(candidate.priority == 2_122_260_223)
        #expect(candidate.address == (try SocketAddress("192.168.1.20:54321")))
        #expect(candidate.kind == .host)
        #expect(candidate.relatedAddress == nil)
        #expect(candidate.sdpAttributeValue == "candidate:3521484545 1 udp 2122260223 192.168.1.20 54321 typ host")
        #expect(try ICECandidate(parsing: candidate.sdpAttributeValue) == candidate)
    }

    @Test func parsesReflexiveIPv6AndTCP() throws {
        let srflx = try ICECandidate(
            parsing: "candidate:842163049 1 UDP 1686052607 203.0.113.7 61000 typ srflx raddr 10.0.0.2 rport 5000\r\n")
        #expect(srflx.kind == .srflx)
        #expect(srflx.relatedAddress == (try SocketAddress("10.0.0.2:5000")))
        #expect(srflx.sdpAttributeValue.hasSuffix("typ srflx raddr 10.0.0.2 rport 5000"))
        let v6 = try ICECandidate(parsing: "candidate:1 1 udp 2122262783 2001:db8::5 40000 typ host")
        #expect(v6.address == (try SocketAddress("[2001:db8::5]:40000")))
        #expect(v6.sdpAttributeValue == "candidate:1 1 udp 2122262783 2001:db8::5 40000 typ host")
        let tcp = try ICECandidate(parsing: "candidate:2 1 tcp 1518280447 192.0.2.9 9 typ host tcptype active")
        #expect(tcp.transport == .tcp)
        #expect(!tcp.isUsable)
        let hidden = try ICECandidate(
            parsing: "candidate:3 1 udp 1677729535 198.51.100.4 3478 typ srflx raddr 0.0.0.0 rport 0")
        #expect(hidden.relatedAddress == (try SocketAddress("0.0.0.0:0")))
    }

    @Test func typedErrors() {
        #expect(throws: ICECandidateParseError.missingFields("candidate:1 1 udp")) {
            try ICECandidate(parsing: "candidate:1 1 udp")
        }
        #expect(throws: ICECandidateParseError.invalidComponent("0")) {
            try ICECandidate(parsing: "candidate:1 0 udp 1 192.0.2.1 1 typ host")
        }
        #expect(throws: ICECandidateParseError.unsupportedTransport("sctp")) {
            try ICECandidate(parsing: "candidate:1 1 sctp 1 192.0.2.1 1 typ host")
        }
        #expect(throws: ICECandidateParseError.invalidPriority("x")) {
            try ICECandidate(parsing: "candidate:1 1 udp x 192.0.2.1 1 typ host")
        }
        #expect(throws: ICECandidateParseError.invalidAddress("0b6a-4c1d.local")) {
            try ICECandidate(parsing: "candidate:1 1 udp 5 0b6a-4c1d.local 1 typ host")
        }
        #expect(throws: ICECandidateParseError.invalidPort("70000")) {
            try ICECandidate(parsing: "candidate:1 1 udp 5 192.0.2.1 70000 typ host")
        }
        #expect(throws: ICECandidateParseError.invalidType("weird")) {
            try ICECandidate(parsing: "candidate:1 1 udp 5 192.0.2.1 7 typ weird")
        }
        for garbage in ["", "candidate:", "a=candidate: 1 1 1 1 1 1 1 1", String(repeating: "typ ", count: 50)] {
            #expect(throws: ICECandidateParseError.self) { try ICECandidate(parsing: garbage) }
        }
    }

    @Test func pairPriority() {
        // RFC 8445 §6.1.2.3 with G = controlling, D = controlled.
        #expect(ICECandidatePair.priority(controlling: 10, controlled: 20) == (10 << 32) + 40)
        #expect(ICECandidatePair.priority(controlling: 20, controlled: 10) == (10 << 32) + 41)
    }

    @Test func randomCredentialsAreValid() {
        let first = ICECredentials.random()
        #expect(first.isValid)
        #expect(first.ufrag.count >= 4 && first.password.count >= 22)
        #expect(first != ICECredentials.random())
        #expect(!ICECredentials(ufrag: "abc", password: String(repeating: "a", count: 22)).isValid)
        #expect(!ICECredentials(ufrag: "abcd", password: String(repeating: "a", count: 21)).isValid)
        #expect(!ICECredentials(ufrag: "ab:d", password: String(repeating: "a", count: 22)).isValid)
    }

    @Test func hostAddresses() {
        let withLoopback = ICEHostAddresses.current(includeLoopback: true)
        let without = ICEHostAddresses.current()
        #expect(withLoopback.contains(SocketAddress.loopbackIPv4(port: 0)))
        #expect(!without.contains(SocketAddress.loopbackIPv4(port: 0)))
        #expect(!without.contains(SocketAddress.loopbackIPv6(port: 0)))
        #expect(!withLoopback.contains { $0.family == .ipv6 && $0.host.lowercased().hasPrefix("fe80") })
    }
}
