import CaptureWebRTC
import Testing

@Suite struct WHIPLinkHeaderTests {
    @Test func parsesSeveralHeadersAndCommaSeparatedLinks() {
        let servers = ICEServer.parse(linkHeaders: [
            "<stun:stun.example.net>; rel=\"ice-server\"",
            "<turn:t.example.net:3478?transport=tcp>; rel=\"ice-server\"; username=\"a;b\"; credential=\"c,d\", "
                + "<https://example.net/doc>; rel=\"help\", <turns:t.example.net>; rel=ice-server; username=u",
        ])
        #expect(servers.map(\.scheme) == [.stun, .turn, .turns])
        #expect(servers[1].username == "a;b")
        #expect(servers[1].credential == "c,d")
        #expect(servers[1].credentialType == "password")
        #expect(servers[1].hostAndPort == "t.example.net:3478")
        #expect(servers[2].username == "u")
        #expect(servers[2].credential == nil)
    }

    @Test func skipsMalformedLinksAndOtherSchemes() {
        #expect(WHIPLinkHeader.parse("no brackets; rel=x").isEmpty)
        #expect(ICEServer.parse(linkHeaders: ["<http://x>; rel=\"ice-server\""]).isEmpty)
        #expect(ICEServer(url: "stun:") == nil)
        let link = WHIPLinkHeader.parse("<urn:ietf:params:whip:ext:example>; rel=\"urn:ietf:params:whip:ext:example\"")
        #expect(link.first?.relations == ["urn:ietf:params:whip:ext:example"])
    }
}
