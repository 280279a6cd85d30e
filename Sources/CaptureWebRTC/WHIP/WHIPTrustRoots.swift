/// The certificate authorities a ``WHIPClient`` trusts for an `https:` endpoint.
///
/// ``system`` (the default) is OpenSSL's default trust store: the system's CA certificates (on Debian and Ubuntu
/// `/etc/ssl/certs`, from the `ca-certificates` package; `SSL_CERT_FILE` and `SSL_CERT_DIR` override it).
/// ``pemFile(_:)`` adds the certificates of a PEM file to them: a private CA's, or a self-signed server's own
/// certificate. Either way the server's certificate must also name the endpoint's host.
public struct WHIPTrustRoots: Sendable, Hashable, CustomStringConvertible {
    /// The path of a PEM file whose certificates are trusted besides the system's, or `nil`.
    public let additionalPEMFile: String?

    /// The system's CA certificates.
    public static let system = WHIPTrustRoots(additionalPEMFile: nil)

    /// The system's CA certificates and those in the PEM file at `path` (one or more `CERTIFICATE` blocks), read
    /// for each `https:` request: a file that cannot be read fails the request with ``WHIPError/transport(method:url:reason:)``.
    public static func pemFile(_ path: String) -> WHIPTrustRoots { WHIPTrustRoots(additionalPEMFile: path) }

    private init(additionalPEMFile: String?) {
        self.additionalPEMFile = additionalPEMFile
    }

    /// `system`, or `system + <path>`.
    public var description: String { additionalPEMFile.map { "system + \($0)" } ?? "system" }
}
