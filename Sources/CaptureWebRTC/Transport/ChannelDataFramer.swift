internal import CaptureCore
internal import CaptureICE
internal import CaptureNet

/// Frames media as TURN ChannelData (RFC 8656 §12.4) into one buffer reused for every packet, and sends it to the
/// TURN server: nothing is allocated per packet on the relayed media path.
///
/// `@unchecked Sendable` is sound: `buffer` is allocated once in `init`, freed once in `deinit`, and read or written
/// only inside `framed.withLock`, so no two threads touch it at once; everything else is immutable.
final class ChannelDataFramer: @unchecked Sendable {
    /// Datagrams framed so far; its lock also guards `buffer` (a lock around an empty value would do for that, but
    /// ThreadSanitizer cannot see it order anything: see ``Locked``).
    private let framed = Locked(0)
    private let buffer: UnsafeMutableRawBufferPointer

    /// A framer for datagrams of up to `capacity` bytes (plus the 4-byte header).
    init(capacity: Int = 65_536) {
        buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity + 4, alignment: 16)
    }

    deinit {
        buffer.deallocate()
    }

    /// Datagrams framed so far (whether or not the socket then took them).
    var framedCount: Int { framed.withLock { $0 } }

    /// Sends `payload` on `channel` to `server` through `socket`; `false` when it does not fit or the send failed.
    func send(
        _ payload: UnsafeRawBufferPointer, channel: UInt16, to server: SocketAddress, socket: UDPSocket
    ) -> Bool {
        framed.withLock { framed in
            guard let count = TURNAllocation.frameChannelData(channel: channel, payload: payload, into: buffer) else {
                return false
            }
            framed += 1
            return socket.send(UnsafeRawBufferPointer(rebasing: buffer[0..<count]), to: server)
        }
    }
}
