import CaptureICE
import CaptureNet
@testable import CaptureWebRTC
import Foundation
import Testing

/// The relayed media path's one reused ChannelData buffer, shared by the sender's media and RTCP threads.
@Suite struct ChannelDataFramerTests {
    /// Two threads framing into the one buffer at once (the sender's frames and its RTCP thread, as in a relayed
    /// call) send only whole, unmixed datagrams. Under ThreadSanitizer this is also the check that the buffer's lock
    /// is seen: a CI run once reported a race here when the lock guarded an empty value (`Locked(())`).
    @Test func twoThreadsSendWholeDatagrams() throws {
        let receiver = try UDPSocket(bindingTo: .loopbackIPv4(port: 0))
        let sender = try UDPSocket(bindingTo: .loopbackIPv4(port: 0))
        defer {
            receiver.close()
            sender.close()
        }
        let framer = ChannelDataFramer(capacity: 256)
        let perThread = 500
        let channel: UInt16 = 0x4001
        let threads = (0..<2).map { index in
            Thread { [receiverAddress = receiver.localAddress] in
                for sequence in 0..<perThread {
                    // Each datagram is one byte repeated: a torn write would mix two values.
                    let payload = [UInt8](repeating: UInt8(index * 100 + sequence % 100), count: 64 + sequence % 64)
                    let sent = payload.withUnsafeBytes {
                        framer.send($0, channel: channel, to: receiverAddress, socket: sender)
                    }
                    if !sent { Issue.record("thread \(index): send \(sequence) failed") }
                }
            }
        }
        threads.forEach { $0.start() }

        var received = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 512, alignment: 16)
        defer { buffer.deallocate() }
        while received < 2 * perThread, let (count, _) = try receiver.receive(into: buffer, timeout: .seconds(5)) {
            let datagram = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            let (parsedChannel, range) = try #require(TURNAllocation.parseChannelData(datagram))
            #expect(parsedChannel == channel)
            let payload = datagram[range]
            #expect((64..<128).contains(payload.count))
            #expect(Set(payload).count == 1, "a datagram mixes two threads' bytes")
            received += 1
        }
        #expect(received == 2 * perThread)
        #expect(framer.framedCount == 2 * perThread)
    }

    /// A payload larger than the buffer is refused, not truncated.
    @Test func refusesWhatDoesNotFit() throws {
        let receiver = try UDPSocket(bindingTo: .loopbackIPv4(port: 0))
        defer { receiver.close() }
        let framer = ChannelDataFramer(capacity: 16)
        let sent = [UInt8](repeating: 1, count: 17).withUnsafeBytes {
            framer.send($0, channel: 0x4000, to: receiver.localAddress, socket: receiver)
        }
        #expect(!sent)
        #expect(framer.framedCount == 0)
    }
}
