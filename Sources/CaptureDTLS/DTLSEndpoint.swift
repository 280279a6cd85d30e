internal import CSSL
package import CaptureRTP

/// A sans-IO DTLS 1.2 endpoint for DTLS-SRTP (RFC 5763, RFC 5764): it never touches a socket or a clock of its own
/// choosing. The owner feeds it received DTLS datagrams (``handle(datagram:nowNs:)``), sends whatever
/// ``pollTransmit()`` returns, and calls ``handleTimeout(nowNs:)`` once ``nextTimeoutNs`` has passed. Once
/// ``state`` is ``DTLSState/connected``, ``srtpKeys`` holds the SRTP keys for `SRTPSession`.
///
/// Each outgoing DTLS datagram stays separate and fits the MTU (default 1200 bytes): OpenSSL fragments handshake
/// messages for the MTU given with `SSL_set_mtu` (and `SSL_OP_NO_QUERY_MTU`), and writes through a custom BIO that
/// queues each flush as datagrams of whole records, at most the MTU each.
///
/// The peer must present a certificate (`SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT`); self-signed
/// certificates are accepted by the verify callback, since what authenticates the peer is its fingerprint in the
/// SDP. The verify callback compares the peer certificate's digest with `remoteFingerprint` (a mismatch aborts the
/// handshake with a bad_certificate alert, so the peer gets no keys either), and the comparison is made again once
/// the handshake completes. A mismatch fails the endpoint with ``DTLSError/fingerprintMismatch(expected:actual:)``
/// and no keys are released.
///
/// The handshake offers DTLS 1.2 only, ECDHE on P-256, and the SRTP profiles given (by default AEAD AES-128-GCM,
/// then AES-CM-128 HMAC-SHA1-80). It must complete within ``handshakeTimeoutNs`` of ``start(nowNs:)``.
///
/// Threading: not Sendable. One thread drives an endpoint (every call, `deinit` included): OpenSSL's `SSL` object
/// is not thread-safe, and its error queue is per thread. Retransmission timers are OpenSSL's own, on the real
/// monotonic clock; `nowNs` (any monotonic nanosecond clock) serves the handshake deadline and ``nextTimeoutNs``.
package final class DTLSEndpoint {
    /// Which side of the handshake this endpoint plays.
    package let role: DTLSRole
    /// The fingerprint the peer's certificate must have (from its SDP).
    package let remoteFingerprint: DTLSFingerprint
    /// The largest datagram this endpoint sends.
    package let mtu: Int
    /// How long the handshake may take from ``start(nowNs:)``: 30 s.
    package static let handshakeTimeoutNs: Int64 = 30_000_000_000
    /// The default MTU: 1200 bytes, safe on every path WebRTC meets.
    package static let defaultMTU = 1200

    /// Where the endpoint is.
    package private(set) var state: DTLSState = .new
    /// The negotiated profile and keys, ours (`local`, for protecting what we send) and the peer's (`remote`, for
    /// unprotecting what we receive); `nil` until ``state`` is ``DTLSState/connected``.
    package private(set) var srtpKeys: DTLSSRTPKeys?
    /// When ``handleTimeout(nowNs:)`` should next be called (on the `nowNs` clock), or `nil` when nothing waits.
    package private(set) var nextTimeoutNs: Int64?
    /// Datagrams ignored: not DTLS records by their first byte (RFC 7983), or received after the endpoint failed
    /// or closed.
    package private(set) var ignoredDatagrams = 0
    /// Flights retransmitted after a timeout.
    package private(set) var retransmissions = 0

    private let context: OpaquePointer  // SSL_CTX *
    private let connection: OpaquePointer  // SSL *
    private let readBIO: OpaquePointer  // BIO * (memory), owned by `connection`
    private let output: DTLSDatagramBIO
    private let certificate: DTLSCertificate
    private var startNs: Int64 = 0
    /// The fingerprint of a peer certificate the verify callback refused.
    private var refusedFingerprint: DTLSFingerprint?

    /// Creates an endpoint with our `certificate`, expecting a peer certificate with `remoteFingerprint`, offering
    /// `profiles` (in preference order; at least one) and sending datagrams of at most `mtu` bytes.
    package init(
        role: DTLSRole, certificate: DTLSCertificate, remoteFingerprint: DTLSFingerprint,
        profiles: [SRTPProfile] = [.aeadAES128GCM, .aesCM128HMACSHA1_80], mtu: Int = DTLSEndpoint.defaultMTU
    ) throws(DTLSError) {
        guard !profiles.isEmpty else { throw .configuration(call: "SSL_CTX_set_tlsext_use_srtp", reason: "no profile") }
        guard (256...65_507).contains(mtu) else { throw .configuration(call: "SSL_set_mtu", reason: "MTU \(mtu)") }
        self.role = role
        self.certificate = certificate
        self.remoteFingerprint = remoteFingerprint
        self.mtu = mtu
        OpenSSLErrorQueue.clear()
        output = try DTLSDatagramBIO(mtu: mtu)
        guard let context = SSL_CTX_new(DTLS_method()) else {
            throw .configuration(call: "SSL_CTX_new", reason: OpenSSLErrorQueue.drain())
        }
        do throws(DTLSError) {
            try Self.configure(context, certificate: certificate, profiles: profiles)
        } catch {
            SSL_CTX_free(context)
            throw error
        }
        guard let connection = SSL_new(context) else {
            SSL_CTX_free(context)
            throw .configuration(call: "SSL_new", reason: OpenSSLErrorQueue.drain())
        }
        guard let readBIO = BIO_new(BIO_s_mem()) else {
            SSL_free(connection)
            SSL_CTX_free(context)
            throw .configuration(call: "BIO_new", reason: OpenSSLErrorQueue.drain())
        }
        // An empty memory BIO reads as "retry later", not as end of file.
        _ = cssl_BIO_set_mem_eof_return(readBIO, -1)
        let writeBIO: OpaquePointer
        do throws(DTLSError) {
            writeBIO = try output.makeBIO()
        } catch {
            BIO_free(readBIO)
            SSL_free(connection)
            SSL_CTX_free(context)
            throw error
        }
        SSL_set_bio(connection, readBIO, writeBIO)  // the SSL owns both from here
        self.context = context
        self.connection = connection
        self.readBIO = readBIO
        // Returns the MTU set (0 when below what DTLS needs).
        guard cssl_SSL_set_mtu(connection, mtu) == mtu else {
            throw .configuration(call: "SSL_set_mtu", reason: OpenSSLErrorQueue.drain())
        }
        // The verify callback finds this endpoint through the SSL's app data (index 0), unretained: the SSL dies first.
        guard SSL_set_ex_data(connection, 0, Unmanaged.passUnretained(self).toOpaque()) == 1 else {
            throw .configuration(call: "SSL_set_ex_data", reason: OpenSSLErrorQueue.drain())
        }
        switch role {
        case .client: SSL_set_connect_state(connection)
        case .server: SSL_set_accept_state(connection)
        }
    }

    deinit {
        SSL_free(connection)  // frees both BIOs; the write BIO's method lives in `output`, freed after
        SSL_CTX_free(context)
    }

    /// DTLS 1.2 only, our key and certificate, the peer's certificate required, P-256, use_srtp.
    private static func configure(
        _ context: OpaquePointer, certificate: DTLSCertificate, profiles: [SRTPProfile]
    ) throws(DTLSError) {
        guard cssl_SSL_CTX_set_min_proto_version(context, cssl_DTLS1_2_VERSION) == 1,
            cssl_SSL_CTX_set_max_proto_version(context, cssl_DTLS1_2_VERSION) == 1
        else { throw .configuration(call: "SSL_CTX_set_min_proto_version", reason: OpenSSLErrorQueue.drain()) }
        guard SSL_CTX_use_certificate(context, certificate.certificate) == 1 else {
            throw .configuration(call: "SSL_CTX_use_certificate", reason: OpenSSLErrorQueue.drain())
        }
        guard SSL_CTX_use_PrivateKey(context, certificate.key) == 1 else {
            throw .configuration(call: "SSL_CTX_use_PrivateKey", reason: OpenSSLErrorQueue.drain())
        }
        guard SSL_CTX_check_private_key(context) == 1 else {
            throw .configuration(call: "SSL_CTX_check_private_key", reason: OpenSSLErrorQueue.drain())
        }
        guard cssl_SSL_CTX_set1_groups_list(context, "P-256") == 1 else {
            throw .configuration(call: "SSL_CTX_set1_groups_list", reason: OpenSSLErrorQueue.drain())
        }
        let names = profiles.map(\.openSSLName).joined(separator: ":")
        // Unlike most of OpenSSL, 0 is success here.
        guard SSL_CTX_set_tlsext_use_srtp(context, names) == 0 else {
            throw .configuration(call: "SSL_CTX_set_tlsext_use_srtp", reason: OpenSSLErrorQueue.drain())
        }
        _ = SSL_CTX_set_options(context, cssl_SSL_OP_NO_QUERY_MTU)
        SSL_CTX_set_verify(
            context, cssl_SSL_VERIFY_PEER | cssl_SSL_VERIFY_FAIL_IF_NO_PEER_CERT, dtlsVerifyPeerCertificate)
    }

    /// Starts the handshake: a client queues its ClientHello, a server waits for one. Later calls do nothing.
    package func start(nowNs: Int64) {
        guard case .new = state else { return }
        state = .connecting
        startNs = nowNs
        drive(nowNs: nowNs)
    }

    /// Takes one received DTLS datagram. An endpoint not yet started starts here. Datagrams that are not DTLS (RFC 7983
    /// first byte 20–63) and datagrams after failure or close are ignored and counted in ``ignoredDatagrams``;
    /// records OpenSSL finds malformed are dropped by it (RFC 6347 §4.1.2.7).
    ///
    /// Throws when this datagram ends the association: the error ``state`` now holds (``DTLSError/closedByPeer``
    /// when the peer sent close_notify; ``state`` is then ``DTLSState/closed``).
    package func handle(datagram: [UInt8], nowNs: Int64) throws(DTLSError) {
        guard let first = datagram.first, (20...63).contains(first), datagram.count <= 65_535 else {
            ignoredDatagrams += 1
            return
        }
        switch state {
        case .new: start(nowNs: nowNs)
        case .connecting, .connected: break
        case .failed, .closed:
            ignoredDatagrams += 1
            return
        }
        let written = datagram.withUnsafeBytes { BIO_write(readBIO, $0.baseAddress, Int32($0.count)) }
        guard written == Int32(datagram.count) else {
            ignoredDatagrams += 1
            return
        }
        let before = state
        drive(nowNs: nowNs)
        // Whatever OpenSSL left unread of this datagram must not be glued to the next one.
        _ = BIO_ctrl(readBIO, BIO_CTRL_RESET, 0, nil)
        if state != before {
            switch state {
            case .failed(let error): throw error
            case .closed: throw .closedByPeer
            default: break
            }
        }
    }

    /// Lets OpenSSL retransmit the last flight if its timer (real clock) has expired, and fails the endpoint once
    /// the handshake deadline has passed. Call when `nowNs` reaches ``nextTimeoutNs``; calling early is harmless.
    package func handleTimeout(nowNs: Int64) {
        guard case .connecting = state else { return }
        if nowNs - startNs >= Self.handshakeTimeoutNs {
            fail(.timeout(milliseconds: Self.handshakeTimeoutNs / 1_000_000))
            return
        }
        OpenSSLErrorQueue.clear()
        let result = cssl_DTLSv1_handle_timeout(connection)
        if result > 0 {
            retransmissions += 1
        } else if result < 0 {
            // Too many retransmissions: OpenSSL has given up.
            fail(.timeout(milliseconds: (nowNs - startNs) / 1_000_000))
            return
        }
        drive(nowNs: nowNs)
    }

    /// The next datagram to send, or `nil` when none waits. Each is at most ``mtu`` bytes.
    package func pollTransmit() -> [UInt8]? { output.pop() }

    /// Sends close_notify (queued for ``pollTransmit()``) and closes. Keys already exported stay valid for media
    /// that is still in flight. Idempotent.
    package func close() {
        switch state {
        case .connecting, .connected:
            OpenSSLErrorQueue.clear()
            _ = SSL_shutdown(connection)
            OpenSSLErrorQueue.clear()
        case .new, .failed, .closed: break
        }
        state = .closed
        nextTimeoutNs = nil
    }

    /// Runs the handshake (or, once connected, reads records) as far as the input allows.
    private func drive(nowNs: Int64) {
        OpenSSLErrorQueue.clear()
        switch state {
        case .connecting:
            let result = SSL_do_handshake(connection)
            if result == 1 {
                finishHandshake()
            } else {
                check(result, call: "SSL_do_handshake")
            }
        case .connected:
            // Application data is not used (no data channels): read and discard; this processes alerts,
            // close_notify and retransmitted handshake records.
            var scratch = [UInt8](repeating: 0, count: 2048)
            while case .connected = state {
                let result = SSL_read(connection, &scratch, Int32(scratch.count))
                if result <= 0 {
                    check(result, call: "SSL_read")
                    break
                }
            }
        case .new, .failed, .closed: break
        }
        updateTimeout(nowNs: nowNs)
    }

    /// Interprets a non-positive result of `call`: waiting for input is fine; close_notify closes; the rest fails.
    private func check(_ result: Int32, call: String) {
        let code = SSL_get_error(connection, result)
        switch code {
        case cssl_SSL_ERROR_WANT_READ, cssl_SSL_ERROR_WANT_WRITE:
            OpenSSLErrorQueue.clear()
        case cssl_SSL_ERROR_ZERO_RETURN:
            // The peer's close_notify: answer it, and stop.
            _ = SSL_shutdown(connection)
            OpenSSLErrorQueue.clear()
            state = .closed
        default:
            let reason = OpenSSLErrorQueue.drain()
            if let refusedFingerprint {
                fail(.fingerprintMismatch(expected: remoteFingerprint, actual: refusedFingerprint))
                return
            }
            fail(.handshakeFailure(call: call, reason: "SSL_get_error \(code): \(reason)"))
        }
    }

    /// Verifies the peer's fingerprint, reads the negotiated profile and exports the keys.
    private func finishHandshake() {
        guard let peer = SSL_get1_peer_certificate(connection) else {
            abandon(.handshakeFailure(call: "SSL_get1_peer_certificate", reason: "no peer certificate"))
            return
        }
        defer { X509_free(peer) }
        let actual: DTLSFingerprint
        do throws(DTLSError) {
            actual = try DTLSCertificate.digest(of: peer, algorithm: remoteFingerprint.algorithm)
        } catch {
            abandon(error)
            return
        }
        guard actual == remoteFingerprint else {
            abandon(.fingerprintMismatch(expected: remoteFingerprint, actual: actual))
            return
        }
        guard let selected = SSL_get_selected_srtp_profile(connection),
            let profile = SRTPProfile(openSSLID: selected.pointee.id)
        else {
            // The peer sees the same missing extension and fails too; our Finished lets it get that far.
            abandon(.noSRTPProfile, withholdingLastFlight: false)
            return
        }
        let keyLength = profile.keyLength
        let saltLength = profile.saltLength
        var material = [UInt8](repeating: 0, count: 2 * (keyLength + saltLength))
        let label = "EXTRACTOR-dtls_srtp"
        let exported = SSL_export_keying_material(
            connection, &material, material.count, label, label.utf8.count, nil, 0, 0)
        guard exported == 1 else {
            abandon(.handshakeFailure(call: "SSL_export_keying_material", reason: OpenSSLErrorQueue.drain()))
            return
        }
        // RFC 5764 §4.2: client_write_key | server_write_key | client_write_salt | server_write_salt.
        let clientKey = Array(material[0..<keyLength])
        let serverKey = Array(material[keyLength..<(2 * keyLength)])
        let clientSalt = Array(material[(2 * keyLength)..<(2 * keyLength + saltLength)])
        let serverSalt = Array(material[(2 * keyLength + saltLength)...])
        do throws(SRTPError) {
            let client = try SRTPKeyingMaterial(key: clientKey, salt: clientSalt, profile: profile)
            let server = try SRTPKeyingMaterial(key: serverKey, salt: serverSalt, profile: profile)
            srtpKeys =
                role == .client
                ? DTLSSRTPKeys(profile: profile, local: client, remote: server)
                : DTLSSRTPKeys(profile: profile, local: server, remote: client)
            state = .connected
        } catch {
            abandon(.handshakeFailure(call: "SSL_export_keying_material", reason: "\(error)"))
        }
    }

    /// Fails the endpoint: no keys, no timer. An alert OpenSSL queued when it failed the handshake still goes out.
    private func fail(_ error: DTLSError) {
        state = .failed(error)
        srtpKeys = nil
        nextTimeoutNs = nil
        OpenSSLErrorQueue.clear()
    }

    /// Fails a handshake OpenSSL completed but we refuse (fingerprint, profile, export) and queues a close_notify.
    /// Unless told otherwise, what OpenSSL queued last (a server's ChangeCipherSpec and Finished, which would
    /// complete the handshake for the peer) is dropped first.
    private func abandon(_ error: DTLSError, withholdingLastFlight: Bool = true) {
        if withholdingLastFlight { output.removeAll() }
        OpenSSLErrorQueue.clear()
        _ = SSL_shutdown(connection)
        fail(error)
    }

    /// Recomputes ``nextTimeoutNs`` from OpenSSL's retransmission timer and the handshake deadline.
    private func updateTimeout(nowNs: Int64) {
        guard case .connecting = state else {
            nextTimeoutNs = nil
            return
        }
        var deadline = startNs + Self.handshakeTimeoutNs
        var remaining = timeval()
        if cssl_DTLSv1_get_timeout(connection, &remaining) == 1 {
            let retransmit = nowNs + Int64(remaining.tv_sec) * 1_000_000_000 + Int64(remaining.tv_usec) * 1_000
            deadline = min(deadline, retransmit)
        }
        nextTimeoutNs = deadline
    }
}

extension DTLSEndpoint {
    /// Whether the peer's leaf certificate (`X509 *`) has ``remoteFingerprint``; remembers a refused one.
    fileprivate func acceptsPeerCertificate(_ certificate: OpaquePointer) -> Bool {
        guard let actual = try? DTLSCertificate.digest(of: certificate, algorithm: remoteFingerprint.algorithm) else {
            return false
        }
        guard actual == remoteFingerprint else {
            refusedFingerprint = actual
            return false
        }
        return true
    }
}

/// The verify callback. WebRTC certificates are self-signed, so chain errors are ignored; what authenticates the
/// peer is its leaf certificate's fingerprint, checked here (a mismatch fails the handshake with a bad_certificate
/// alert before either side has keys) and again once the handshake completes.
private let dtlsVerifyPeerCertificate: @convention(c) (Int32, OpaquePointer?) -> Int32 = { _, store in
    guard let store else { return 0 }
    guard X509_STORE_CTX_get_error_depth(store) == 0 else { return 1 }
    guard let ssl = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()),
        let context = SSL_get_ex_data(OpaquePointer(ssl), 0),
        let certificate = X509_STORE_CTX_get_current_cert(store)
    else { return 0 }
    let endpoint = Unmanaged<DTLSEndpoint>.fromOpaque(context).takeUnretainedValue()
    guard endpoint.acceptsPeerCertificate(certificate) else {
        // Reported to the peer as bad_certificate (the chain error alone would say unknown_ca).
        X509_STORE_CTX_set_error(store, X509_V_ERR_CERT_REJECTED)
        return 0
    }
    return 1
}

extension SRTPProfile {
    /// The profile's name in OpenSSL's use_srtp list (RFC 5764 §4.1.2, RFC 7714 §14.2).
    var openSSLName: String {
        switch self {
        case .aesCM128HMACSHA1_80: "SRTP_AES128_CM_SHA1_80"
        case .aeadAES128GCM: "SRTP_AEAD_AES_128_GCM"
        }
    }

    /// The profile with OpenSSL's `SRTP_PROTECTION_PROFILE` id, or `nil` for one this package does not support.
    init?(openSSLID id: UInt) {
        switch id {
        case cssl_SRTP_AES128_CM_SHA1_80: self = .aesCM128HMACSHA1_80
        case cssl_SRTP_AEAD_AES_128_GCM: self = .aeadAES128GCM
        default: return nil
        }
    }
}
