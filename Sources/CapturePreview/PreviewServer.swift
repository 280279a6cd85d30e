#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
internal import CaptureCore
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
///
/// The listening socket is opened close-on-exec (`ListeningSocket`), so a child process the app starts does not keep
/// the port bound. Accepted connections are NIO's own (`accept4` without `SOCK_CLOEXEC`): a child started while one
/// is open holds it until the child exits, at most the connection's life.
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
        /// The bind address is neither a numeric IPv4/IPv6 address nor a name that resolves, or the port is not in
        /// 0...65535.
        case invalidAddress(String)
        /// Another socket is bound to the address (`EADDRINUSE`).
        case portInUse(String)
        /// Opening, binding or listening failed: the system call and its `errno`.
        case systemCall(name: String, errno: Int32)
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
        let opened: (descriptor: Int32, address: CaptureNet.SocketAddress)
        do {
            opened = try await Self.openListeningSocket(host: host, port: port)
        } catch {
            state = .idle
            throw error
        }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let idleTimeout = self.idleTimeout
        let listener: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, Never>
        do {
            // The socket is ours (close-on-exec, see ListeningSocket); NIO adopts it and closes it with the channel.
            listener = try await ServerBootstrap(group: group)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .bind(opened.descriptor) { channel in
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
            // Not closed here: NIO owns the descriptor from the adoption on and closes it with a channel that fails to
            // register; closing it again could close a descriptor another thread has just been given.
            try? await group.shutdownGracefully()
            throw error
        }
        let address = opened.address
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

    /// Opens the listening socket (backlog 64) on `host`: a numeric address or `localhost` at once, any other name
    /// resolved on the blocking executor (`getaddrinfo` may wait on the network), its first address taken.
    private static func openListeningSocket(
        host: String, port: Int
    ) async throws(StartError) -> (descriptor: Int32, address: CaptureNet.SocketAddress) {
        guard let portNumber = UInt16(exactly: port) else { throw .invalidAddress("\(host):\(port)") }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let address: CaptureNet.SocketAddress
        if let numeric = try? CaptureNet.SocketAddress(host: bare, port: portNumber) {
            address = numeric
        } else {
            let resolved = await BlockingExecutor.shared.run { HostResolver.resolve(host: bare, port: portNumber) }
            guard let first = resolved.first else { throw .invalidAddress(host) }
            address = first
        }
        do {
            return try ListeningSocket.open(bindingTo: address, backlog: 64)
        } catch {
            if case .portInUse(let taken) = error { throw .portInUse("\(taken)") }
            let call = error.systemCall ?? (name: "socket", errno: EBADF)
            throw .systemCall(name: call.name, errno: call.errno)
        }
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
