internal import CSSL

/// A fresh ECDSA P-256 key pair and a self-signed X.509 certificate for one DTLS session (RFC 8827 §6.5: WebRTC
/// endpoints identify themselves by the certificate's fingerprint in SDP, not by a certificate chain).
///
/// The certificate has a random 127-bit serial, the subject and issuer `CN=capturer-probe`, and is valid from one
/// hour ago (clock skew) for ``validityDays`` days.
///
/// Sendable: the key and certificate are never modified after `init`, OpenSSL's reference counts on them are
/// atomic, and OpenSSL allows concurrent read-only use of a key and certificate by several connections.
public final class DTLSCertificate: @unchecked Sendable {
    /// The common name of the subject and issuer.
    public static let commonName = "capturer-probe"
    /// How long the certificate is valid, in days.
    public static let validityDays = 30

    /// The private key (`EVP_PKEY *`).
    let key: OpaquePointer
    /// The certificate (`X509 *`).
    let certificate: OpaquePointer
    /// The SHA-256 fingerprint of the certificate, for SDP `a=fingerprint`.
    public let fingerprint: DTLSFingerprint

    /// Generates a key pair and signs a certificate with it (ECDSA with SHA-256).
    public init() throws(DTLSError) {
        OpenSSLErrorQueue.clear()
        guard let key = cssl_EVP_EC_gen("P-256") else {
            throw .certificateGeneration(call: "EVP_EC_gen", reason: OpenSSLErrorQueue.drain())
        }
        guard let certificate = X509_new() else {
            EVP_PKEY_free(key)
            throw .certificateGeneration(call: "X509_new", reason: OpenSSLErrorQueue.drain())
        }
        do throws(DTLSError) {
            try Self.fill(certificate, key: key)
            self.fingerprint = try Self.digest(of: certificate, algorithm: "sha-256")
        } catch {
            X509_free(certificate)
            EVP_PKEY_free(key)
            throw error
        }
        self.key = key
        self.certificate = certificate
    }

    deinit {
        X509_free(certificate)
        EVP_PKEY_free(key)
    }

    /// Sets version, serial, names, validity and public key, and signs.
    private static func fill(_ certificate: OpaquePointer, key: OpaquePointer) throws(DTLSError) {
        func check(_ result: Int32, _ call: String) throws(DTLSError) {
            guard result == 1 else { throw .certificateGeneration(call: call, reason: OpenSSLErrorQueue.drain()) }
        }
        try check(X509_set_version(certificate, 2), "X509_set_version")  // X.509 v3

        var serial = [UInt8](repeating: 0, count: 16)
        try check(RAND_bytes(&serial, Int32(serial.count)), "RAND_bytes")
        serial[0] &= 0x7F  // positive
        guard let number = BN_bin2bn(serial, Int32(serial.count), nil) else {
            throw .certificateGeneration(call: "BN_bin2bn", reason: OpenSSLErrorQueue.drain())
        }
        defer { BN_free(number) }
        guard BN_to_ASN1_INTEGER(number, X509_get_serialNumber(certificate)) != nil else {
            throw .certificateGeneration(call: "BN_to_ASN1_INTEGER", reason: OpenSSLErrorQueue.drain())
        }

        guard X509_gmtime_adj(X509_getm_notBefore(certificate), -3600) != nil,
            X509_gmtime_adj(X509_getm_notAfter(certificate), Int(validityDays) * 86_400) != nil
        else { throw .certificateGeneration(call: "X509_gmtime_adj", reason: OpenSSLErrorQueue.drain()) }

        guard let name = X509_get_subject_name(certificate) else {
            throw .certificateGeneration(call: "X509_get_subject_name", reason: OpenSSLErrorQueue.drain())
        }
        try check(
            X509_NAME_add_entry_by_txt(name, "CN", cssl_MBSTRING_ASC, commonName, -1, -1, 0),
            "X509_NAME_add_entry_by_txt")
        try check(X509_set_issuer_name(certificate, name), "X509_set_issuer_name")
        try check(X509_set_pubkey(certificate, key), "X509_set_pubkey")
        guard X509_sign(certificate, key, EVP_sha256()) > 0 else {
            throw .certificateGeneration(call: "X509_sign", reason: OpenSSLErrorQueue.drain())
        }
    }

    /// The fingerprint of `certificate` (`X509 *`) under `algorithm` (a name ``DTLSFingerprint`` accepts).
    static func digest(of certificate: OpaquePointer, algorithm: String) throws(DTLSError) -> DTLSFingerprint {
        let digest: OpaquePointer?
        switch algorithm {
        case "sha-1": digest = EVP_sha1()
        case "sha-224": digest = EVP_sha224()
        case "sha-256": digest = EVP_sha256()
        case "sha-384": digest = EVP_sha384()
        case "sha-512": digest = EVP_sha512()
        default: throw .invalidFingerprint("unknown hash function \"\(algorithm)\"")
        }
        var bytes = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard X509_digest(certificate, digest, &bytes, &length) == 1 else {
            throw .handshakeFailure(call: "X509_digest", reason: OpenSSLErrorQueue.drain())
        }
        return try DTLSFingerprint(algorithm: algorithm, bytes: Array(bytes.prefix(Int(length))))
    }
}
