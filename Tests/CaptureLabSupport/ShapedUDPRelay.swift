import CaptureCore
import CaptureNet
import Foundation

/// A UDP relay on loopback between a WebRTC peer (a browser) and one of our transports, with a bottleneck toward the
/// peer: what our transport sends waits in a drop-tail queue and leaves at ``rateKbps`` (a serialization clock, as
/// `Scripts/lab/linkem.py` models a link), what the peer sends passes at once. A test that narrows one viewer's link
/// without root (no namespaces, no `tc`): give the peer ``peerFacingPort`` as our only candidate, and keep the peer's
/// own candidates from our transport so that every packet takes the relay.
///
/// One thread of its own waits in `ppoll` on both sockets (at most 20 ms, to see ``stop()``); ``stop()`` waits for it
/// to end and closes the sockets. Every method may be called from any thread.
package final class ShapedUDPRelay: Sendable {
    struct State {
        var rateKbps: Int?
        var queueMs = 300
        var stopping = false
        var finished = false
        var toPeer = 0
        var toTransport = 0
        var dropped = 0
    }

    /// The port the peer sends to (on 127.0.0.1).
    package let peerFacingPort: Int
    private let target: SocketAddress
    private let peerSocket: UDPSocket
    private let transportSocket: UDPSocket
    private let state = Locked(State())

    /// Opens the relay toward our transport at `target` (an IPv4 loopback address), the link open (no limit).
    package init(target: SocketAddress) throws {
        self.target = target
        peerSocket = try UDPSocket(bindingTo: .loopbackIPv4(port: 0))
        transportSocket = try UDPSocket(bindingTo: .loopbackIPv4(port: 0))
        peerFacingPort = Int(peerSocket.localAddress.port)
        Thread.detachNewThread { [self] in run() }
    }

    /// Narrows the link toward the peer to `kbps` (`nil`: no limit), with a drop-tail queue of `queueMs`.
    package func setRate(kbps: Int?, queueMs: Int = 300) {
        state.withLock {
            $0.rateKbps = kbps
            $0.queueMs = queueMs
        }
    }

    /// Datagrams relayed to the peer and to our transport, and dropped at the full queue.
    package var counts: (toPeer: Int, toTransport: Int, dropped: Int) {
        state.withLock { ($0.toPeer, $0.toTransport, $0.dropped) }
    }

    /// Stops the thread and closes the sockets.
    package func stop() async {
        state.withLock { $0.stopping = true }
        while !state.withLock({ $0.finished }) { try? await Task.sleep(for: .milliseconds(5)) }
        peerSocket.close()
        transportSocket.close()
    }

    private func run() {
        var poller = SocketPoller(descriptors: [peerSocket.pollDescriptor, transportSocket.pollDescriptor])
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
        defer {
            buffer.deallocate()
            state.withLock { $0.finished = true }
        }
        var peer: SocketAddress?
        var queue: [(departure: ContinuousClock.Instant, bytes: [UInt8])] = []
        var busyUntil = ContinuousClock.now
        while !state.withLock({ $0.stopping }) {
            var now = ContinuousClock.now
            let wait = queue.first.map { now.duration(to: $0.departure) } ?? .milliseconds(20)
            do {
                try poller.wait(timeout: min(max(wait, .zero), .milliseconds(20)))
            } catch {
                return
            }
            now = ContinuousClock.now
            if poller.isReady(0) {
                while let received = try? peerSocket.receiveIfReady(into: buffer) {
                    peer = received.source
                    transportSocket.send(UnsafeRawBufferPointer(rebasing: buffer[0..<received.count]), to: target)
                    state.withLock { $0.toTransport += 1 }
                }
            }
            if poller.isReady(1) {
                let (rate, queueMs) = state.withLock { ($0.rateKbps, $0.queueMs) }
                while let received = try? transportSocket.receiveIfReady(into: buffer) {
                    let bytes = Array(UnsafeRawBufferPointer(rebasing: buffer[0..<received.count]))
                    guard let rate, rate > 0 else {
                        queue.append((now, bytes))
                        continue
                    }
                    // The link serializes one datagram after the other (28 bytes of IP and UDP headers each).
                    let start = max(now, busyUntil)
                    let done = start + .microseconds((bytes.count + 28) * 8 * 1_000 / rate)
                    guard now.duration(to: done) <= .milliseconds(queueMs) else {
                        state.withLock { $0.dropped += 1 }
                        continue
                    }
                    busyUntil = done
                    queue.append((done, bytes))
                }
            }
            var sent = 0
            while sent < queue.count, queue[sent].departure <= now {
                if let peer { queue[sent].bytes.withUnsafeBytes { _ = peerSocket.send($0, to: peer) } }
                sent += 1
            }
            if sent > 0 {
                queue.removeFirst(sent)
                state.withLock { $0.toPeer += sent }
            }
        }
    }
}
