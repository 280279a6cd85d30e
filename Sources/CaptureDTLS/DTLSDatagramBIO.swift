internal import CSSL

/// The DTLS endpoint's output: a custom OpenSSL BIO whose every write becomes its own datagram in a queue, so that
/// record boundaries survive (a memory BIO would run the records of a flight together).
///
/// During a handshake OpenSSL buffers a flight's records and writes them with one `BIO_write` per flush, which it
/// means to be one datagram of at most the MTU set with `SSL_set_mtu`; its accounting can overshoot by a record
/// header or a ChangeCipherSpec, so a write is split at record boundaries into datagrams of at most ``mtu`` bytes
/// (a single record larger than that, which OpenSSL does not produce, would go alone). The callbacks are
/// Swift `@convention(c)` functions; the BIO's data pointer is an unretained reference to this object, which the
/// endpoint keeps alive for as long as the `SSL` (which owns the BIO) exists. Used by one thread (the endpoint's).
final class DTLSDatagramBIO {
    /// The datagrams written and not yet taken, oldest first.
    private(set) var datagrams: [[UInt8]] = []
    /// Index of the next datagram to hand out (the array is compacted when emptied).
    private var head = 0

    /// The BIO method (`BIO_METHOD *`), freed in `deinit` (after the `SSL` and its BIO).
    let method: OpaquePointer
    /// The largest datagram to queue, when records allow.
    let mtu: Int

    /// Creates the method for datagrams of at most `mtu` bytes. Throws when OpenSSL cannot allocate it.
    init(mtu: Int) throws(DTLSError) {
        self.mtu = mtu
        let type = BIO_get_new_index() | cssl_BIO_TYPE_SOURCE_SINK
        guard let method = BIO_meth_new(type, "capture-dtls-datagrams") else {
            throw .configuration(call: "BIO_meth_new", reason: OpenSSLErrorQueue.drain())
        }
        guard BIO_meth_set_write(method, dtlsDatagramWrite) == 1,
            BIO_meth_set_ctrl(method, dtlsDatagramControl) == 1,
            BIO_meth_set_create(method, dtlsDatagramCreate) == 1,
            BIO_meth_set_destroy(method, dtlsDatagramDestroy) == 1
        else {
            BIO_meth_free(method)
            throw .configuration(call: "BIO_meth_set_write", reason: OpenSSLErrorQueue.drain())
        }
        self.method = method
    }

    deinit { BIO_meth_free(method) }

    /// A new BIO (`BIO *`) that appends to this queue. The caller hands it to `SSL_set_bio`.
    func makeBIO() throws(DTLSError) -> OpaquePointer {
        guard let bio = BIO_new(method) else {
            throw .configuration(call: "BIO_new", reason: OpenSSLErrorQueue.drain())
        }
        BIO_set_data(bio, Unmanaged.passUnretained(self).toOpaque())
        return bio
    }

    /// Queues one write (called from the write callback): whole DTLS records packed into datagrams of at most
    /// ``mtu`` bytes. Bytes that do not parse as a sequence of records are queued as they are, one datagram.
    func append(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > mtu else {
            datagrams.append(Array(bytes))
            return
        }
        // DTLS record header (RFC 6347 §4.1): type, version (2), epoch (2), sequence (6), length (2).
        var boundaries: [Int] = []
        var offset = 0
        while offset < bytes.count {
            guard bytes.count - offset >= 13 else { break }
            let length = Int(bytes[offset + 11]) << 8 | Int(bytes[offset + 12])
            guard offset + 13 + length <= bytes.count else { break }
            offset += 13 + length
            boundaries.append(offset)
        }
        guard offset == bytes.count else {
            datagrams.append(Array(bytes))
            return
        }
        var start = 0
        var end = 0
        for boundary in boundaries {
            if boundary - start > mtu && end > start {
                datagrams.append(Array(bytes[start..<end]))
                start = end
            }
            end = boundary
        }
        if end > start { datagrams.append(Array(bytes[start..<end])) }
    }

    /// Takes the oldest datagram, or `nil`.
    func pop() -> [UInt8]? {
        guard head < datagrams.count else { return nil }
        let datagram = datagrams[head]
        head += 1
        if head == datagrams.count {
            datagrams.removeAll(keepingCapacity: true)
            head = 0
        }
        return datagram
    }

    /// How many datagrams wait to be taken.
    var pending: Int { datagrams.count - head }

    /// Drops every waiting datagram.
    func removeAll() {
        datagrams.removeAll()
        head = 0
    }
}

/// `BIO_write`: one write, one datagram.
private let dtlsDatagramWrite: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32 = {
    bio, data, length in
    guard let bio, let data, length >= 0, let context = BIO_get_data(bio) else { return -1 }
    let queue = Unmanaged<DTLSDatagramBIO>.fromOpaque(context).takeUnretainedValue()
    queue.append(UnsafeRawBufferPointer(start: data, count: Int(length)))
    return length
}

/// `BIO_ctrl`: flush succeeds; every other control (MTU queries, timeouts, peer addresses) is unsupported (0), which
/// is what OpenSSL expects of a non-socket datagram BIO given `SSL_OP_NO_QUERY_MTU` and an explicit MTU.
private let dtlsDatagramControl: @convention(c) (OpaquePointer?, Int32, Int, UnsafeMutableRawPointer?) -> Int = {
    _, command, _, _ in
    command == cssl_BIO_CTRL_FLUSH ? 1 : 0
}

/// `BIO_new`: marks the BIO initialised.
private let dtlsDatagramCreate: @convention(c) (OpaquePointer?) -> Int32 = { bio in
    guard let bio else { return 0 }
    BIO_set_init(bio, 1)
    return 1
}

/// `BIO_free`: forgets the queue (owned by the endpoint, not the BIO).
private let dtlsDatagramDestroy: @convention(c) (OpaquePointer?) -> Int32 = { bio in
    guard let bio else { return 0 }
    BIO_set_data(bio, nil)
    BIO_set_init(bio, 0)
    return 1
}
