internal import CSSL

/// One SHA-1 hash state that can be restarted without allocating, for ``SRTPHMACSHA1``.
///
/// OpenSSL 3.0's `EVP_DigestInit_ex` frees the context's provider state and allocates a new one on every call, even
/// when no digest is given to keep the current one (Debian 12 ships 3.0.x: one allocation per call, measured with
/// `capture-bench send --isolated yes --srtp cm80`); releases after 3.0 keep the state. So this drives SHA-1 through
/// the interface that the EVP layer itself calls, the provider's digest dispatch table (provider-digest(7), public
/// API): `newctx` once, then `init`, `update` and `final` on the same state for every message. The table is the one
/// of the provider that implements the `EVP_MD` fetched for "SHA1" (`EVP_MD_get0_provider`,
/// `OSSL_PROVIDER_query_operation`), so the same SHA-1 runs as through EVP — the default provider's, or the FIPS
/// provider's when that is configured. Not thread-safe: one thread at a time.
final class SRTPSHA1 {
    /// The SHA-1 digest length in bytes.
    static let digestLength = 20

    /// The provider's digest functions this type calls.
    private struct Functions {
        let newContext: OSSL_FUNC_digest_newctx_fn
        let initialize: OSSL_FUNC_digest_init_fn
        let update: OSSL_FUNC_digest_update_fn
        let finalize: OSSL_FUNC_digest_final_fn
        let freeContext: OSSL_FUNC_digest_freectx_fn
    }

    /// The fetched `EVP_MD *`, owned: its reference keeps the provider, hence its function table, loaded.
    private let digest: OpaquePointer
    private let functions: Functions
    /// The provider's hash state (its `algctx`), owned.
    private let state: UnsafeMutableRawPointer

    /// Fetches SHA-1 from the default library context and creates one hash state.
    init() throws(SRTPError) {
        guard let digest = EVP_MD_fetch(nil, "SHA1", nil) else { throw .openSSLFailure("EVP_MD_fetch(SHA1)") }
        guard let provider = EVP_MD_get0_provider(digest), let functions = Self.functions(of: digest, in: provider)
        else {
            EVP_MD_free(digest)
            throw .openSSLFailure("OSSL_PROVIDER_query_operation(SHA1)")
        }
        guard let state = functions.newContext(OSSL_PROVIDER_get0_provider_ctx(provider)) else {
            EVP_MD_free(digest)
            throw .openSSLFailure("SHA1 newctx")
        }
        self.digest = digest
        self.functions = functions
        self.state = state
    }

    deinit {
        functions.freeContext(state)  // the provider wipes the state as it frees it
        EVP_MD_free(digest)
    }

    /// Empties the hash (SHA-1's initial state).
    @inline(__always)
    func start() throws(SRTPError) {
        try SRTPError.requireOpenSSLSuccess(functions.initialize(state, nil), "SHA1 init")
    }

    /// Hashes `count` bytes at `bytes`.
    @inline(__always)
    func update(_ bytes: UnsafeRawPointer, count: Int) throws(SRTPError) {
        try SRTPError.requireOpenSSLSuccess(
            functions.update(state, bytes.assumingMemoryBound(to: UInt8.self), count), "SHA1 update")
    }

    /// Writes the ``digestLength``-byte digest at `digest`; ``start()`` begins the next message.
    @inline(__always)
    func finish(into digest: UnsafeMutableRawPointer) throws(SRTPError) {
        var written = 0
        try SRTPError.requireOpenSSLSuccess(
            functions.finalize(state, digest.assumingMemoryBound(to: UInt8.self), &written, Self.digestLength),
            "SHA1 final")
    }

    /// The digest functions of `digest` in `provider`'s table: the algorithm whose names include one of `digest`'s.
    private static func functions(of digest: OpaquePointer, in provider: OpaquePointer) -> Functions? {
        var noCache: Int32 = 0
        guard let algorithms = OSSL_PROVIDER_query_operation(provider, OSSL_OP_DIGEST, &noCache) else { return nil }
        defer { OSSL_PROVIDER_unquery_operation(provider, OSSL_OP_DIGEST, algorithms) }
        var algorithm = algorithms
        while let names = algorithm.pointee.algorithm_names {
            let matches = String(cString: names).split(separator: ":").contains { EVP_MD_is_a(digest, String($0)) == 1 }
            if matches, let table = algorithm.pointee.implementation { return functions(in: table) }
            algorithm += 1
        }
        return nil
    }

    /// The five functions this type needs from a digest dispatch table, or `nil` if one is missing.
    private static func functions(in table: UnsafePointer<OSSL_DISPATCH>) -> Functions? {
        var newContext: OSSL_FUNC_digest_newctx_fn?
        var initialize: OSSL_FUNC_digest_init_fn?
        var update: OSSL_FUNC_digest_update_fn?
        var finalize: OSSL_FUNC_digest_final_fn?
        var freeContext: OSSL_FUNC_digest_freectx_fn?
        var entry = table
        while entry.pointee.function_id != 0 {
            switch entry.pointee.function_id {
            case OSSL_FUNC_DIGEST_NEWCTX: newContext = OSSL_FUNC_digest_newctx(entry)
            case OSSL_FUNC_DIGEST_INIT: initialize = OSSL_FUNC_digest_init(entry)
            case OSSL_FUNC_DIGEST_UPDATE: update = OSSL_FUNC_digest_update(entry)
            case OSSL_FUNC_DIGEST_FINAL: finalize = OSSL_FUNC_digest_final(entry)
            case OSSL_FUNC_DIGEST_FREECTX: freeContext = OSSL_FUNC_digest_freectx(entry)
            default: break
            }
            entry += 1
        }
        guard let newContext, let initialize, let update, let finalize, let freeContext else { return nil }
        return Functions(
            newContext: newContext, initialize: initialize, update: update, finalize: finalize,
            freeContext: freeContext)
    }
}
