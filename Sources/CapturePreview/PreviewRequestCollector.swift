import NIOCore
import NIOHTTP1

/// Gathers one connection's HTTP request parts into complete ``PreviewRequest``s, keeping at most `limit` body bytes:
/// a larger body is read and dropped (the router then answers 413) so that the client, still sending, reads the
/// answer instead of a reset. Pure state, driven by the server's per-connection loop.
struct PreviewRequestCollector {
    /// What the connection should do after a part.
    enum Action {
        /// Nothing yet: wait for more parts.
        case none
        /// Send `100 Continue` (the client asked with `Expect: 100-continue` and the body may fit).
        case sendContinue(HTTPResponseHead)
        /// Hand a complete request to the router; close the connection after the response unless `keepAlive`.
        case request(PreviewRequest, keepAlive: Bool)
        /// Answer `response` and close the connection without reading the rest of the request.
        case rejectAndClose(PreviewResponse)
    }

    /// The largest body kept.
    let limit: Int
    /// How much body is read and dropped before the connection is closed instead.
    let discardLimit: Int
    /// The peer, "host:port".
    let remote: String

    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var received = 0

    init(limit: Int, remote: String) {
        self.limit = limit
        self.discardLimit = max(limit * 16, 1 << 20)
        self.remote = remote
    }

    mutating func consume(_ part: HTTPServerRequestPart) -> Action {
        switch part {
        case .head(let head):
            self.head = head
            body = []
            received = 0
            let declared = head.headers.first(name: "Content-Length").flatMap { Int($0) }
            if let declared, declared > limit,
                head.headers.first(name: "Expect")?.lowercased() == "100-continue"
            {
                // The client waits before sending: refuse now and close, nothing unread is left behind.
                return .rejectAndClose(
                    PreviewRouter.error(.payloadTooLarge("the body is larger than \(limit) bytes")))
            }
            if head.headers.first(name: "Expect")?.lowercased() == "100-continue" {
                return .sendContinue(HTTPResponseHead(version: head.version, status: .continue))
            }
            return .none
        case .body(let buffer):
            received += buffer.readableBytes
            if received <= limit {
                body.append(contentsOf: buffer.readableBytesView)
            } else {
                body = []
                if received > discardLimit {
                    return .rejectAndClose(
                        PreviewRouter.error(.payloadTooLarge("the body is larger than \(limit) bytes")))
                }
            }
            return .none
        case .end:
            guard let head else { return .none }
            self.head = nil
            let request = PreviewRequest(
                method: head.method, uri: head.uri, headers: head.headers, body: body, bodyTooLarge: received > limit,
                remote: remote)
            body = []
            received = 0
            return .request(request, keepAlive: head.isKeepAlive)
        }
    }
}
