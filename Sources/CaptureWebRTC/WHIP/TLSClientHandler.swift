internal import CSSL
internal import CaptureDTLS
import Glibc
internal import NIOCore

/// Why a TLS connection failed: OpenSSL's reasons, or what the handler saw. A failed certificate verification's
/// reason starts with `CERTIFICATE_VERIFY_FAILED: ` and gives OpenSSL's verify error (`self-signed certificate`,
/// `hostname mismatch`, `IP address mismatch`, …).
struct TLSClientError: Error, CustomStringConvertible {
    /// What failed, in words.
    var reason: String
    /// The reason, prefixed with `TLS: `.
    var description: String { "TLS: \(reason)" }
}

/// A TLS client as a NIO channel handler: TLS 1.2 or 1.3 on OpenSSL's libssl, through two memory BIOs, with the
/// server's certificate verified against a trust store and the server's name or IP address.
///
/// The handler sits at the head of the pipeline: bytes read from the socket go into OpenSSL's read BIO, and what
/// OpenSSL decrypts goes on as `ByteBuffer`s; plaintext written by the handlers behind it (the HTTP encoder's
/// `IOData`) is encrypted with `SSL_write`, and what OpenSSL puts in its write BIO goes to the socket. The handshake
/// starts when the channel becomes active; what is written before it completes waits in the handler and goes out
/// once it has. Nothing is ever sent unencrypted after the handshake starts.
///
/// ## Verification
/// `SSL_VERIFY_PEER` with OpenSSL's default trust store (`SSL_CTX_set_default_verify_paths`: the system's CA
/// certificates), plus a PEM file's certificates when the caller adds one. The certificate must match the server:
/// an IP address literal is checked against the certificate's IP addresses (`X509_VERIFY_PARAM_set1_ip_asc`), a name
/// against its DNS names (`SSL_set1_host`; never the subject's common name, no partial wildcards such as
/// `w*.example.net`). A certificate that fails
/// fails the handshake (OpenSSL sends the alert), and the error reported through `errorCaught` is a
/// ``TLSClientError`` whose reason is `CERTIFICATE_VERIFY_FAILED: <OpenSSL's verify error>`.
///
/// ## Closing
/// Closing the channel sends close_notify before the socket closes; the server's close_notify is not awaited (nothing
/// more is read). The server's close_notify is answered with ours, and the channel is closed. A connection that ends
/// without close_notify after the handshake is reported to the handlers behind as a ``UncleanShutdown`` user event
/// before `channelInactive`: only they know whether what they read was complete (a response whose length its
/// framing gave) or may have been truncated (a body delimited by the connection's close).
///
/// ## Threading
/// Not Sendable. Created and used on its channel's event loop, which alone touches the `SSL` object (not thread-safe)
/// and the thread's OpenSSL error queue. Its `SSL_CTX` is its own (one connection per context), freed with it.
///
/// ## RFCs
/// - RFC 8446 (TLS 1.3) and RFC 5246 (TLS 1.2); nothing older is offered (RFC 8996).
/// - RFC 6066 §3: server_name (SNI) for names, never for IP literals; a trailing dot is dropped.
/// - RFC 7301: ALPN offers `http/1.1` only.
/// - RFC 9110 §4.3.4 and RFC 9525: the server's identity is the URL's host, checked against the certificate's
///   subjectAltName.
/// - RFC 8446 §6.1: close_notify on close; a closure without it is reported, not ignored.
final class TLSClientHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// The user inbound event sent when the connection ends after the handshake without the server's close_notify.
    struct UncleanShutdown: Hashable, Sendable {}

    private enum State {
        /// Created; the handshake starts when the channel is active.
        case idle
        case handshaking
        case open
        /// Closed, failed, or the server sent close_notify: nothing more is read or written.
        case closed
    }

    private var state = State.idle
    private let context: OpaquePointer  // SSL_CTX *
    private let connection: OpaquePointer  // SSL *
    private let readBIO: OpaquePointer  // BIO * (memory), owned by `connection`
    private let writeBIO: OpaquePointer  // BIO * (memory), owned by `connection`
    /// Plaintext written before the handshake completed, with its promises.
    private var pendingWrites: [(ByteBuffer, EventLoopPromise<Void>?)] = []
    /// The largest plaintext read in one `SSL_read`: a TLS record's.
    private static let readSize = 16_384

    /// A client for `serverName` (the URL's host: a name or an IP address literal, IPv6 without brackets), trusting
    /// the system's CA certificates and, if given, those in the PEM file `trustFile`.
    init(serverName: String, trustFile: String?) throws(TLSClientError) {
        OpenSSLErrorQueue.clear()
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw TLSClientError(reason: "SSL_CTX_new: \(OpenSSLErrorQueue.drain())")
        }
        do throws(TLSClientError) {
            try Self.configure(context, trustFile: trustFile)
        } catch {
            SSL_CTX_free(context)
            throw error
        }
        guard let connection = SSL_new(context) else {
            SSL_CTX_free(context)
            throw TLSClientError(reason: "SSL_new: \(OpenSSLErrorQueue.drain())")
        }
        guard let readBIO = BIO_new(BIO_s_mem()) else {
            SSL_free(connection)
            SSL_CTX_free(context)
            throw TLSClientError(reason: "BIO_new: \(OpenSSLErrorQueue.drain())")
        }
        guard let writeBIO = BIO_new(BIO_s_mem()) else {
            BIO_free(readBIO)
            SSL_free(connection)
            SSL_CTX_free(context)
            throw TLSClientError(reason: "BIO_new: \(OpenSSLErrorQueue.drain())")
        }
        // An empty memory BIO reads as "retry later", not as end of file: the socket's end is the channel's.
        _ = cssl_BIO_set_mem_eof_return(readBIO, -1)
        SSL_set_bio(connection, readBIO, writeBIO)  // the SSL owns both from here
        self.context = context
        self.connection = connection
        self.readBIO = readBIO
        self.writeBIO = writeBIO
        try expect(serverName: serverName)
        SSL_set_connect_state(connection)
    }

    deinit {
        SSL_free(connection)  // frees both BIOs
        SSL_CTX_free(context)
    }

    /// TLS 1.2 at least; the peer's certificate verified against the default trust store and `trustFile`.
    private static func configure(_ context: OpaquePointer, trustFile: String?) throws(TLSClientError) {
        guard cssl_SSL_CTX_set_min_proto_version(context, cssl_TLS1_2_VERSION) == 1 else {
            throw TLSClientError(reason: "SSL_CTX_set_min_proto_version: \(OpenSSLErrorQueue.drain())")
        }
        SSL_CTX_set_verify(context, cssl_SSL_VERIFY_PEER, nil)
        guard SSL_CTX_set_default_verify_paths(context) == 1 else {
            throw TLSClientError(reason: "SSL_CTX_set_default_verify_paths: \(OpenSSLErrorQueue.drain())")
        }
        if let trustFile {
            guard SSL_CTX_load_verify_file(context, trustFile) == 1 else {
                throw TLSClientError(
                    reason: "cannot load trusted certificates from \(trustFile): \(OpenSSLErrorQueue.drain())")
            }
        }
    }

    /// Sets the identity the certificate must have, SNI for a name, and ALPN.
    private func expect(serverName: String) throws(TLSClientError) {
        var name = serverName
        if name.hasSuffix(".") { name.removeLast() }
        if Self.isIPAddress(name) {
            guard let parameters = SSL_get0_param(connection), X509_VERIFY_PARAM_set1_ip_asc(parameters, name) == 1
            else { throw TLSClientError(reason: "X509_VERIFY_PARAM_set1_ip_asc: \(OpenSSLErrorQueue.drain())") }
        } else {
            guard !name.isEmpty, !name.utf8.contains(0) else {
                throw TLSClientError(reason: "no server name to verify")
            }
            // Only subjectAltName's DNS names count, never the subject's common name (RFC 9525 §6.3), and a
            // wildcard only as a whole label.
            SSL_set_hostflags(
                connection, cssl_X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS | cssl_X509_CHECK_FLAG_NEVER_CHECK_SUBJECT)
            guard SSL_set1_host(connection, name) == 1 else {
                throw TLSClientError(reason: "SSL_set1_host: \(OpenSSLErrorQueue.drain())")
            }
            guard cssl_SSL_set_tlsext_host_name(connection, name) == 1 else {
                throw TLSClientError(reason: "SSL_set_tlsext_host_name: \(OpenSSLErrorQueue.drain())")
            }
        }
        let alpn: [UInt8] = [8] + Array("http/1.1".utf8)
        // Unlike most of OpenSSL, 0 is success here.
        guard SSL_set_alpn_protos(connection, alpn, UInt32(alpn.count)) == 0 else {
            throw TLSClientError(reason: "SSL_set_alpn_protos: \(OpenSSLErrorQueue.drain())")
        }
    }

    /// Whether `host` is an IPv4 or IPv6 address literal.
    private static func isIPAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    // MARK: - Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { startHandshake(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        startHandshake(context: context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        switch state {
        case .idle, .handshaking, .open: break
        case .closed: return
        }
        // A memory BIO takes everything: BIO_write writes the whole buffer or fails.
        let written = bytes.withUnsafeReadableBytes { pointer in
            pointer.isEmpty ? 0 : Int(BIO_write(readBIO, pointer.baseAddress, Int32(clamping: pointer.count)))
        }
        guard written == bytes.readableBytes else {
            fail(context: context, reason: "BIO_write: \(OpenSSLErrorQueue.drain())")
            return
        }
        switch state {
        case .handshaking: advanceHandshake(context: context)
        case .open: readPlaintext(context: context)
        case .idle, .closed: break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        let before = state
        state = .closed
        switch before {
        case .idle, .handshaking:
            let error = TLSClientError(reason: "the connection closed during the handshake")
            context.fireErrorCaught(error)
            failPendingWrites(error)
        case .open:
            context.fireUserInboundEventTriggered(UncleanShutdown())
        case .closed: break
        }
        failPendingWrites()
        context.fireChannelInactive()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .byteBuffer(let plaintext) = unwrapOutboundIn(data) else {
            promise?.fail(TLSClientError(reason: "a file region cannot be sent through TLS"))
            return
        }
        switch state {
        case .idle, .handshaking: pendingWrites.append((plaintext, promise))
        case .open: encrypt(plaintext, promise: promise, context: context)
        case .closed: promise?.fail(ChannelError.ioOnClosedChannel)
        }
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard mode == .all else {
            context.close(mode: mode, promise: promise)
            return
        }
        if case .open = state {
            // Queues close_notify; the server's is not awaited (the result says so: 0).
            OpenSSLErrorQueue.clear()
            _ = SSL_shutdown(connection)
            OpenSSLErrorQueue.clear()
            flushCiphertext(context: context)
        }
        state = .closed
        failPendingWrites()
        context.close(mode: mode, promise: promise)
    }

    // MARK: - TLS

    private func startHandshake(context: ChannelHandlerContext) {
        guard case .idle = state else { return }
        state = .handshaking
        advanceHandshake(context: context)
    }

    /// Runs the handshake as far as the input allows; once complete, sends what was written meanwhile and reads
    /// whatever application data came with the handshake's last flight.
    private func advanceHandshake(context: ChannelHandlerContext) {
        OpenSSLErrorQueue.clear()
        let result = SSL_do_handshake(connection)
        guard result == 1 else {
            let code = SSL_get_error(connection, result)
            switch code {
            case cssl_SSL_ERROR_WANT_READ, cssl_SSL_ERROR_WANT_WRITE:
                OpenSSLErrorQueue.clear()
                flushCiphertext(context: context)
            default:
                fail(context: context, reason: handshakeFailure(code: code))
            }
            return
        }
        state = .open
        let writes = pendingWrites
        pendingWrites = []
        for (plaintext, promise) in writes {
            encrypt(plaintext, promise: promise, context: context)
        }
        // The handshake's last flight and the records written (or nothing): all of it goes out now.
        flushCiphertext(context: context)
        context.flush()
        readPlaintext(context: context)
    }

    /// Why the handshake failed: a certificate verification's error, or OpenSSL's error queue.
    private func handshakeFailure(code: Int32) -> String {
        let queued = OpenSSLErrorQueue.drain()
        let verify = SSL_get_verify_result(connection)
        guard verify != Int(X509_V_OK) else { return "handshake failed (SSL_get_error \(code)): \(queued)" }
        let text = X509_verify_cert_error_string(verify).map { String(cString: $0) } ?? "error \(verify)"
        return "CERTIFICATE_VERIFY_FAILED: \(text) (X509_V_ERR \(verify))"
    }

    /// Decrypts what the read BIO holds and passes it on, until OpenSSL wants more input.
    private func readPlaintext(context: ChannelHandlerContext) {
        var delivered = false
        while case .open = state {
            OpenSSLErrorQueue.clear()
            var buffer = context.channel.allocator.buffer(capacity: Self.readSize)
            var result: Int32 = 0
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: Self.readSize) { pointer in
                result = SSL_read(connection, pointer.baseAddress, Int32(min(pointer.count, Int(Int32.max))))
                return max(Int(result), 0)
            }
            if result > 0 {
                delivered = true
                context.fireChannelRead(wrapInboundOut(buffer))
                continue
            }
            let code = SSL_get_error(connection, result)
            switch code {
            case cssl_SSL_ERROR_WANT_READ, cssl_SSL_ERROR_WANT_WRITE:
                OpenSSLErrorQueue.clear()
                // Post-handshake messages (a key update) may have queued records of ours.
                flushCiphertext(context: context)
            case cssl_SSL_ERROR_ZERO_RETURN:
                // The server's close_notify: answer it, and end the connection.
                if delivered { context.fireChannelReadComplete() }
                delivered = false
                OpenSSLErrorQueue.clear()
                _ = SSL_shutdown(connection)
                OpenSSLErrorQueue.clear()
                flushCiphertext(context: context)
                state = .closed
                context.close(promise: nil)
            default:
                if delivered { context.fireChannelReadComplete() }
                delivered = false
                fail(context: context, reason: "SSL_read (SSL_get_error \(code)): \(OpenSSLErrorQueue.drain())")
            }
            break
        }
        if delivered { context.fireChannelReadComplete() }
    }

    /// Encrypts `plaintext` and writes the records, `promise` with them.
    private func encrypt(_ plaintext: ByteBuffer, promise: EventLoopPromise<Void>?, context: ChannelHandlerContext) {
        guard plaintext.readableBytes > 0 else {
            context.write(wrapOutboundOut(.byteBuffer(plaintext)), promise: promise)
            return
        }
        OpenSSLErrorQueue.clear()
        // A memory BIO takes everything: SSL_write writes the whole buffer or fails.
        let result = plaintext.withUnsafeReadableBytes { pointer in
            SSL_write(connection, pointer.baseAddress, Int32(clamping: pointer.count))
        }
        guard result == plaintext.readableBytes else {
            let reason = "SSL_write (SSL_get_error \(SSL_get_error(connection, result))): \(OpenSSLErrorQueue.drain())"
            promise?.fail(TLSClientError(reason: reason))
            fail(context: context, reason: reason)
            return
        }
        guard let records = takeCiphertext(context: context) else {
            promise?.succeed()
            return
        }
        context.write(wrapOutboundOut(.byteBuffer(records)), promise: promise)
    }

    /// What OpenSSL has written to the write BIO, or `nil` when it is empty.
    private func takeCiphertext(context: ChannelHandlerContext) -> ByteBuffer? {
        let pending = Int(BIO_ctrl_pending(writeBIO))
        guard pending > 0 else { return nil }
        var buffer = context.channel.allocator.buffer(capacity: pending)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: pending) { pointer in
            max(Int(BIO_read(writeBIO, pointer.baseAddress, Int32(clamping: pending))), 0)
        }
        return buffer
    }

    /// Sends what OpenSSL has written (handshake messages, alerts, close_notify) to the socket, now.
    private func flushCiphertext(context: ChannelHandlerContext) {
        guard let records = takeCiphertext(context: context) else { return }
        context.writeAndFlush(wrapOutboundOut(.byteBuffer(records)), promise: nil)
    }

    /// Ends the connection: the alert OpenSSL queued goes out, the error goes to the handlers behind, the channel
    /// closes.
    private func fail(context: ChannelHandlerContext, reason: String) {
        guard state != .closed else { return }
        flushCiphertext(context: context)
        state = .closed
        let error = TLSClientError(reason: reason)
        // The cause first: the handlers behind learn it before any of their writes fails with it.
        context.fireErrorCaught(error)
        failPendingWrites(error)
        context.close(promise: nil)
    }

    /// Fails what waited for the handshake, with `error` (the channel's close when none is given).
    private func failPendingWrites(_ error: any Error = ChannelError.ioOnClosedChannel) {
        let writes = pendingWrites
        pendingWrites = []
        for (_, promise) in writes { promise?.fail(error) }
    }
}
