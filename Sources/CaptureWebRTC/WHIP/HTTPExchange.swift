import Foundation
internal import NIOCore
internal import NIOHTTP1
internal import NIOPosix

/// One HTTP/1.1 request and its whole response, on a connection of its own: the WHIP client's HTTP.
///
/// ``perform(_:trustRoots:timeout:maximumBodyBytes:)`` connects with NIO's `ClientBootstrap` (names resolved by NIO,
/// IPv6 and IPv4 raced), adds a ``TLSClientHandler`` for `https:`, NIOHTTP1's `HTTPRequestEncoder` and
/// `HTTPResponseDecoder`, and a collector that gathers the response. It sends the request with `Connection: close`
/// and closes the connection once the response has ended (or failed): WHIP sends a handful of requests per session,
/// so a connection per request costs little and leaves nothing open between them.
///
/// ## Limits
/// The whole exchange, from the connection attempt to the response body's last byte, must end within the timeout:
/// one timer on the connection's event loop fails it with ``Failure/timedOut`` and closes the connection. A body
/// over `maximumBodyBytes` is not read further: a 4xx/5xx response keeps its start, any other status fails with
/// ``Failure/responseTooLarge``. The response head is limited by NIOHTTP1's decoder (80 KiB of header fields).
/// Whatever the server sends (garbage, an alert, a connection closed mid-body) ends as a ``Failure``.
///
/// ## Threading
/// The connection lives on one thread of NIO's shared `MultiThreadedEventLoopGroup.singleton`; the calling task
/// suspends (it blocks no thread) until the response or the failure, and a cancelled task fails the exchange and
/// closes the connection. The sockets are NIO's: NIO opens them without `SOCK_CLOEXEC` and exposes no descriptor
/// to set `FD_CLOEXEC` on afterwards, so a process started while a request is in flight inherits its socket.
///
/// ## RFCs
/// - RFC 9110 (HTTP semantics): methods, status codes, `Host`, `Content-Length`.
/// - RFC 9112 (HTTP/1.1): the message syntax and body framing (`Content-Length`, chunked, or the connection's close,
///   §6.3), `Connection: close` (§9.6). Informational (1xx) responses are skipped.
/// - RFC 2818 and RFC 9110 §4.3.4: `https:` is HTTP over TLS with the server's identity checked against its
///   certificate (``TLSClientHandler``); a body delimited by the close of a TLS connection must end with
///   close_notify, or it may have been truncated and is refused.
enum HTTPExchange {
    /// A request: the method, an `http:` or `https:` URL, header fields (in order), and a body or none.
    struct Request: Sendable {
        var method: HTTPMethod
        var url: URL
        var headers: [(String, String)]
        var body: [UInt8]?
    }

    /// A received response: status, header fields (names as the server sent them, one entry per field line), body.
    struct Response: Sendable {
        var status: Int
        var fields: [(String, String)]
        var body: [UInt8]

        /// Every value of the header `name` (case-insensitive), in order.
        func headers(_ name: String) -> [String] {
            fields.filter { $0.0.caseInsensitiveCompare(name) == .orderedSame }.map(\.1)
        }

        /// The first value of the header `name` (case-insensitive).
        func header(_ name: String) -> String? { headers(name).first }
    }

    /// Why an exchange failed.
    enum Failure: Error {
        /// Not an `http:` or `https:` URL with a host.
        case invalidURL
        /// The exchange did not end within its time limit.
        case timedOut
        /// A 1xx–3xx response's body was over the limit.
        case responseTooLarge
        /// Anything below HTTP's semantics: DNS, the connection, TLS, a malformed response, an early close.
        case transport(String)
    }

    /// Where a request goes: the scheme's, host's and port's parts of its URL, and its request target.
    private struct Target {
        var tls: Bool
        /// The host, IPv6 without brackets.
        var host: String
        var port: Int
        /// The `Host` header's value.
        var authority: String
        /// The path and query, percent-encoded as in the URL (`/` when empty).
        var requestTarget: String

        init?(_ url: URL) {
            guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true),
                let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
                var host = components.host, !host.isEmpty
            else { return nil }
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            guard !host.isEmpty else { return nil }
            tls = scheme == "https"
            let defaultPort = tls ? 443 : 80
            port = components.port ?? defaultPort
            guard (1...65_535).contains(port) else { return nil }
            self.host = host
            let bracketed = host.contains(":") ? "[\(host)]" : host
            authority = port == defaultPort ? bracketed : "\(bracketed):\(port)"
            let path = components.percentEncodedPath
            requestTarget = (path.isEmpty ? "/" : path) + (components.percentEncodedQuery.map { "?\($0)" } ?? "")
        }
    }

    /// Sends `request` and returns its response, read within `timeout`, its body up to `maximumBodyBytes`.
    static func perform(
        _ request: Request, trustRoots: WHIPTrustRoots, timeout: Duration, maximumBodyBytes: Int
    ) async throws(Failure) -> Response {
        guard let target = Target(request.url) else { throw .invalidURL }
        var head = HTTPRequestHead(version: .http1_1, method: request.method, uri: target.requestTarget)
        head.headers.add(name: "Host", value: target.authority)
        head.headers.add(contentsOf: request.headers)
        if let body = request.body { head.headers.replaceOrAdd(name: "Content-Length", value: String(body.count)) }
        head.headers.replaceOrAdd(name: "Connection", value: "close")
        let requestHead = head
        let requestBody = request.body.map { ByteBuffer(bytes: $0) }

        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        let promise = eventLoop.makePromise(of: Response.self)
        let limit = TimeAmount(timeout)  // clamped to Int64.max nanoseconds
        let timer = eventLoop.scheduleTask(deadline: .now() + limit) { promise.fail(Failure.timedOut) }
        promise.futureResult.whenComplete { _ in timer.cancel() }
        let (connectLimit, overflow) = limit.nanoseconds.addingReportingOverflow(1_000_000_000)
        let trustFile = trustRoots.additionalPEMFile
        let bootstrap = ClientBootstrap(group: eventLoop)
            // The exchange's timer ends a connection attempt first (a timeout is the exchange's, not NIO's).
            .connectTimeout(.nanoseconds(overflow ? .max : connectLimit))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    // Every connection attempt's channel closes when the exchange ends, however it ends.
                    promise.futureResult.whenComplete { _ in channel.close(promise: nil) }
                    let pipeline = channel.pipeline.syncOperations
                    if target.tls {
                        try pipeline.addHandler(TLSClientHandler(serverName: target.host, trustFile: trustFile))
                    }
                    try pipeline.addHTTPClientHandlers(leftOverBytesStrategy: .dropBytes)
                    try pipeline.addHandler(HTTPResponseCollector(promise: promise, maximumBodyBytes: maximumBodyBytes))
                }
            }
        bootstrap.connect(host: target.host, port: target.port).whenComplete { result in
            switch result {
            case .failure(let error):
                promise.fail(error)
            case .success(let channel):
                channel.write(HTTPClientRequestPart.head(requestHead)).whenFailure { promise.fail($0) }
                if let requestBody {
                    channel.write(HTTPClientRequestPart.body(.byteBuffer(requestBody))).whenFailure { promise.fail($0) }
                }
                channel.writeAndFlush(HTTPClientRequestPart.end(nil)).whenFailure { promise.fail($0) }
            }
        }
        do {
            return try await withTaskCancellationHandler {
                try await promise.futureResult.get()
            } onCancel: {
                promise.fail(CancellationError())
            }
        } catch {
            throw failure(error, target: target)
        }
    }

    /// `error` as a ``Failure``, in words for a transport failure.
    private static func failure(_ error: any Error, target: Target) -> Failure {
        switch error {
        case let failure as Failure:
            return failure
        case ChannelError.connectTimeout:
            return .timedOut
        case let error as NIOConnectionError:
            // A TLS handler that could not be made (its trust roots unreadable) fails every attempt alike.
            if let tls = error.connectionErrors.lazy.compactMap({ $0.error as? TLSClientError }).first {
                return .transport(tls.description)
            }
            var reasons = error.connectionErrors.map { "\($0.target): \($0.error)" }
            if reasons.isEmpty {
                reasons = [error.dnsAError, error.dnsAAAAError].compactMap { $0.map { "name resolution: \($0)" } }
            }
            let reason = reasons.isEmpty ? "no address" : reasons.joined(separator: "; ")
            return .transport("cannot connect to \(target.host) port \(target.port): \(reason)")
        case let error as TLSClientError:
            return .transport(error.description)
        case HTTPParserError.invalidEOFState:
            return .transport("the connection closed before the response was complete")
        case let error as HTTPParserError:
            return .transport("invalid HTTP response: \(error)")
        case is CancellationError:
            return .transport("cancelled")
        default:
            return .transport("\(error)")
        }
    }
}

/// The last handler of an exchange's pipeline: gathers the response's head and body and completes the exchange's
/// promise with them, or with the first error or early close. It takes part once the request's head has gone through
/// it (a connection attempt that lost the race to another is closed without a word).
///
/// Threading: not Sendable; on its channel's event loop.
private final class HTTPResponseCollector: ChannelDuplexHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    private let promise: EventLoopPromise<HTTPExchange.Response>
    private let maximumBodyBytes: Int
    /// The request's head has been written on this channel.
    private var requested = false
    /// The promise has been completed.
    private var finished = false
    private var head: HTTPResponseHead?
    private var body: [UInt8] = []
    /// The TLS connection ended without the server's close_notify.
    private var uncleanTLSShutdown = false

    init(promise: EventLoopPromise<HTTPExchange.Response>, maximumBodyBytes: Int) {
        self.promise = promise
        self.maximumBodyBytes = maximumBodyBytes
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .head = unwrapOutboundIn(data) { requested = true }
        context.write(data, promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard requested, !finished else { return }
        switch unwrapInboundIn(data) {
        case .head(let received):
            head = received
        case .body(let buffer):
            guard let head else { return fail(HTTPExchange.Failure.transport("a response body before its head")) }
            let room = maximumBodyBytes - body.count
            guard buffer.readableBytes > room else {
                body += buffer.readableBytesView
                return
            }
            // An error's first line is all that is read from its body; anything else this long is refused.
            guard head.status.code >= 400 else { return fail(HTTPExchange.Failure.responseTooLarge) }
            body += buffer.readableBytesView.prefix(room)
            succeed(head)
        case .end:
            guard let head else { return fail(HTTPExchange.Failure.transport("a response without a head")) }
            // Only a body delimited by the connection's close can end after the close: without close_notify, the
            // connection may have been cut by someone other than the server (RFC 8446 §6.1).
            guard !uncleanTLSShutdown else {
                return fail(
                    HTTPExchange.Failure.transport(
                        "the TLS connection closed without close_notify: the response may be truncated"))
            }
            succeed(head)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is TLSClientHandler.UncleanShutdown { uncleanTLSShutdown = true }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if requested { fail(error) }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if requested {
            let what = head == nil ? "without a response" : "before the response was complete"
            fail(HTTPExchange.Failure.transport("the server closed the connection \(what)"))
        }
        context.fireChannelInactive()
    }

    private func succeed(_ head: HTTPResponseHead) {
        guard !finished else { return }
        finished = true
        promise.succeed(
            HTTPExchange.Response(
                status: Int(head.status.code), fields: head.headers.map { ($0.name, $0.value) }, body: body))
    }

    private func fail(_ error: any Error) {
        guard !finished else { return }
        finished = true
        promise.fail(error)
    }
}
