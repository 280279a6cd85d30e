import CaptureWebRTC
import Testing

@Suite struct TrickleFragmentTests {
    @Test func rendersTheRFC8840Fragment() {
        let fragment = TrickleFragment(
            iceUfrag: "ufrag1234", icePassword: "pwd",
            candidates: [
                "1 1 udp 2130706431 10.0.0.1 5000 typ host",
                "a=candidate:2 1 udp 1694498815 203.0.113.7 5000 typ srflx",
            ], endOfCandidates: true)
        #expect(
            fragment.render()
                == "a=ice-ufrag:ufrag1234\r\na=ice-pwd:pwd\r\nm=video 9 UDP/TLS/RTP/SAVPF 0\r\na=mid:0\r\n"
                + "a=candidate:1 1 udp 2130706431 10.0.0.1 5000 typ host\r\n"
                + "a=candidate:2 1 udp 1694498815 203.0.113.7 5000 typ srflx\r\na=end-of-candidates\r\n")
        #expect(TrickleFragment.contentType == "application/trickle-ice-sdpfrag")
    }

    @Test func withoutEndOfCandidates() {
        let text = TrickleFragment(iceUfrag: "u", icePassword: "p", mid: "video0", candidates: []).render()
        #expect(text == "a=ice-ufrag:u\r\na=ice-pwd:p\r\nm=video 9 UDP/TLS/RTP/SAVPF 0\r\na=mid:video0\r\n")
    }
}
