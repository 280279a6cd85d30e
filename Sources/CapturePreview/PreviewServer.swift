public import CaptureNet
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix

/// The live preview's HTTP server: the page, its figures and the WHEP endpoint (``PreviewRouter``), on swift-nio's
/// HTTP/1 codec.
///
/// Each connection is a `NIOAsyncChannel` served by a child task: the task gathers each request (the body up to the
/// limit, a larger one read and dropped for a 413), the router answers it in Swift concurrency, and the response goes
/// back through the channel's outbound writer (which hops to the event loop). Connections idle for ``idleTimeout`` are
/// closed. ``stop()`` closes the listening socket, cancels every connection's task, waits for them (and so for
/// requests in flight: the ``WHEPSessionHandler`` should return promptly when cancelled), and shuts down the event
/// loop group the server made: no thread or descriptor is left behind. A server starts once; call ``stop()`` before
/// dropping it.
public actor PreviewServer {
    private enum State {
        case idle
        case starting
        case running(group: MultiThreadedEventLoopGroup, listener: Channel, serving: Task<Void, Never>)
        case stopped
    }

    /// Why ``start(bind:port:)`` failed.
    public enum StartError: Error, Sendable, Hashable {
        /// The server was already started (or stopped: a server runs once).
        case alreadyStarted
        /// The listening socket has no local IP address and port.
        case noLocalAddress
    }

    /// The router answering requests.
    public nonisolated let router: PreviewRouter
    /// How long a connection may send nothing before the server closes it.
    public nonisolated let idleTimeout: TimeAmount
    private let logger: Logger
    private var state = State.idle

    /// A server answering through `handler`, accepting bodies up to `bodyLimit` bytes, closing connections idle for
    /// `idleTimeout` (the page polls every second), counting into `statistics`.
    public init(
        handler: any WHEPSessionHandler, bodyLimit: Int = PreviewRouter.defaultBodyLimit,
        idleTimeout: TimeAmount = .seconds(30), statistics: PreviewServerStatistics = PreviewServerStatistics(),
        logger: Logger = Logger(label: "swift-camera-capture.preview")
    ) {
        self.router = PreviewRouter(handler: handler, statistics: statistics, bodyLimit: bodyLimit)
        self.idleTimeout = idleTimeout
        self.logger = logger
    }

    /// What the server has answered so far.
    public nonisolated var statistics: PreviewServerStatistics { router.statistics }

    /// Starts listening like ``start(bind:port:)`` and returns the bound port number (the chosen one for port 0).
    public func listen(bind host: String = "127.0.0.1", port: Int = 8090) async throws -> Int {
        Int(try await start(bind: host, port: port).port)
    }

    /// Binds `host` (127.0.0.1 by default: this machine only; an interface's address or `0.0.0.0` opens it to the
    /// LAN) and `port` (0 picks a free one) and starts serving; returns the bound address.
    public func start(bind host: String = "127.0.0.1", port: Int = 8090) async throws -> CaptureNet.SocketAddress {
        guard case .idle = state else { throw StartError.alreadyStarted }
        state = .starting
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let idleTimeout = self.idleTimeout
        let listener: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, Never>
        do {
            listener = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 64)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .bind(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandlers(
                            IdleStateHandler(readTimeout: idleTimeout), IdleConnectionCloser())
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                        return try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(
                            wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            state = .idle
            try? await group.shutdownGracefully()
            throw error
        }
        guard let bound = listener.channel.localAddress, let address = Self.socketAddress(bound) else {
            state = .idle
            try? await listener.channel.close()
            try? await group.shutdownGracefully()
            throw StartError.noLocalAddress
        }
        let router = self.router
        let logger = self.logger
        let serving = Task { await Self.serve(listener, router: router, logger: logger) }
        state = .running(group: group, listener: listener.channel, serving: serving)
        logger.info("preview serving", metadata: ["address": "\(address)"])
        if case .failure(let error) = router.page {
            logger.error("preview page unavailable: / answers 500", metadata: ["error": "\(error)"])
        }
        return address
    }

    /// Stops serving: closes the listening socket and every connection, waits for requests in flight, and shuts down
    /// the event loop group. The port is free when it returns. Does nothing unless running.
    public func stop() async {
        guard case .running(let group, let listener, let serving) = state else { return }
        state = .stopped
        try? await listener.close()
        serving.cancel()
        await serving.value
        do {
            try await group.shutdownGracefully()
        } catch {
            logger.warning("preview event loop shutdown failed", metadata: ["error": "\(error)"])
        }
        logger.info("preview stopped")
    }

    /// Accepts connections until the listener closes or the task is cancelled, one child task per connection.
    private static func serve(
        _ listener: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, Never>,
        router: PreviewRouter, logger: Logger
    ) async {
        do {
            try await listener.executeThenClose { connections in
                try await withThrowingDiscardingTaskGroup { group in
                    for try await connection in connections {
                        group.addTask { await serve(connection, router: router, logger: logger) }
                    }
                }
            }
        } catch {
            logger.debug("preview listener ended", metadata: ["error": "\(error)"])
        }
    }

    /// Serves one connection's requests in order until the client closes, asks to close, or the task is cancelled.
    private static func serve(
        _ connection: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, router: PreviewRouter,
        logger: Logger
    ) async {
        let remote = connection.channel.remoteAddress.map(describe) ?? "unknown"
        do {
            try await connection.executeThenClose { inbound, outbound in
                var collector = PreviewRequestCollector(limit: router.bodyLimit, remote: remote)
                for try await part in inbound {
                    switch collector.consume(part) {
                    case .none:
                        continue
                    case .sendContinue(let head):
                        try await outbound.write(.head(head))
                    case .rejectAndClose(let response):
                        router.statistics.recordMalformed()
                        router.statistics.recordResponse(status: Int(response.status.code))
                        try await write(response, keepAlive: false, version: .http1_1, to: outbound)
                        return
                    case .request(let request, let keepAlive):
                        let response = await router.respond(to: request)
                        logger.debug(
                            "preview request",
                            metadata: [
                                "method": "\(request.method)", "uri": "\(request.uri)", "remote": "\(remote)",
                                "status": "\(response.status.code)",
                            ])
                        try await write(response, keepAlive: keepAlive, version: .http1_1, to: outbound)
                        if !keepAlive { return }
                    }
                }
            }
        } catch let error as HTTPParserError {
            // HTTPServerProtocolErrorHandler has already answered 400 and closes the connection.
            router.statistics.recordMalformed()
            router.statistics.recordResponse(status: 400)
            logger.debug("preview malformed request", metadata: ["remote": "\(remote)", "error": "\(error)"])
        } catch {
            logger.debug("preview connection ended", metadata: ["remote": "\(remote)", "error": "\(error)"])
        }
    }

    private static func write(
        _ response: PreviewResponse, keepAlive: Bool, version: HTTPVersion,
        to outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>
    ) async throws {
        var headers = response.headers
        headers.replaceOrAdd(name: "Content-Length", value: String(response.body.count))
        if !keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
        let head = HTTPResponseHead(version: version, status: response.status, headers: headers)
        var parts: [HTTPServerResponsePart] = [.head(head)]
        if !response.body.isEmpty { parts.append(.body(.byteBuffer(ByteBuffer(bytes: response.body)))) }
        parts.append(.end(nil))
        try await outbound.write(contentsOf: parts)
    }

    private static func describe(_ address: NIOCore.SocketAddress) -> String {
        guard let ip = address.ipAddress, let port = address.port else { return "\(address)" }
        return address.protocol == .inet6 ? "[\(ip)]:\(port)" : "\(ip):\(port)"
    }

    /// NIO's address of the listening socket as ours (`"\(ip):\(port)"`, `"[\(ip)]:\(port)"` when printed); `nil`
    /// unless it is an IP address with a port.
    private static func socketAddress(_ address: NIOCore.SocketAddress) -> CaptureNet.SocketAddress? {
        guard let ip = address.ipAddress, let port = address.port, let port = UInt16(exactly: port) else { return nil }
        return try? CaptureNet.SocketAddress(host: ip, port: port)
    }
}

/// Closes its connection when `IdleStateHandler` reports that nothing was read for the idle timeout (a client that
/// stalls in the middle of a request, or keeps an unused connection open).
private final class IdleConnectionCloser: ChannelInboundHandler {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }
}
