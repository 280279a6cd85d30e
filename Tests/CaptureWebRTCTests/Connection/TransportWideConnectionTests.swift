import CaptureCall
import CaptureNetworkSimulator
import CaptureRTP
import CaptureNet
import CaptureWebRTC
import Foundation
import Testing

/// Transport-wide congestion control between our two whole connections in virtual time: the publisher numbers
/// every packet, the receiving connection feeds back what arrived when, and the publisher's history turns that into
/// reports (see ``WholeConnectionTests`` for the scenario).
@Suite("WebRTCConnection: transport-wide congestion control feedback in virtual time")
struct TransportWideConnectionTests {
    typealias Scenario = WholeConnectionTests.Scenario
    static let publisherAddress = WholeConnectionTests.publisherAddress
    static let viewerAddress = WholeConnectionTests.viewerAddress

    @Test("on the wire: every packet carries the extension, numbered consecutively from 1, nothing lost or repeated")
    func consecutiveNumbersOnTheWire() throws {
        let scenario = try Scenario(seed: 20, mediaFor: .seconds(3), transportWideCC: true)
        scenario.run(for: .seconds(4))
        let sent = try #require(scenario.publisher.connection.mediaStatistics)
        let wide = scenario.publisher.connection.statistics.transportWideCC
        let viewer = scenario.viewer
        #expect(wide.isSending && !wide.isReceiving)
        // The start probes are padding on the RTX stream: numbered like the media.
        let numbered = sent.packets + sent.paddingPackets
        #expect(sent.paddingPackets > 0, "the pacer sent the start probes")
        #expect(viewer.transportNumbered == numbered, "every packet the viewer authenticated was numbered")
        #expect(wide.packetsSent == numbered)
        let numbers = viewer.transportArrivals.keys.sorted()
        #expect(numbers == Array(1...UInt16(numbered)), "consecutive from 1, one number per packet")
        // The viewer numbered nothing of its own (it sends only RTCP), and fed back every 100 ms.
        #expect(viewer.connection.statistics.transportWideCC.isReceiving)
        #expect(viewer.connection.statistics.transportWideCC.packetsReceived == numbered)
    }

    @Test(
        "a 40 ms, 5 Mbit/s link: reported arrivals are the true ones shifted by one constant: 40 ms plus the queue")
    func arrivalsFollowTheLink() throws {
        let forward = LinkConfiguration(delay: .milliseconds(40), rate: 5_000_000, queueBytes: 1_000_000)
        let scenario = try Scenario(
            seed: 21, link: LinkConfiguration(delay: .milliseconds(40)), forward: forward, transportWideCC: true)
        scenario.run(for: .seconds(6))
        let link = scenario.network.statistics(from: Self.publisherAddress, to: Self.viewerAddress)
        let publisher = scenario.publisher
        let viewer = scenario.viewer
        let wide = publisher.connection.statistics.transportWideCC
        let received = publisher.transportReports.flatMap(\.packets).filter(\.isReceived)
        print(
            "virtual-time TWCC: \(wide.packetsSent) numbered, \(wide.feedbackReceived) feedback messages, "
                + "\(wide.packetsReportedReceived) reported received, \(wide.packetsReportedLost) lost, "
                + "\(wide.bytesInFlight) bytes in flight")
        // 5 s of media, feedback every 100 ms from the first packet on.
        #expect((45...55).contains(wide.feedbackReceived), "feedback messages: \(wide.feedbackReceived)")
        #expect(viewer.connection.statistics.transportWideCC.feedbackSent == wide.feedbackReceived)
        #expect(publisher.transportReports.count == wide.feedbackReceived)
        #expect(wide.packetsReportedReceived == wide.packetsSent, "everything sent was reported received")
        #expect(received.count == wide.packetsSent)
        #expect(wide.packetsReportedLost == 0)
        #expect(wide.bytesInFlight == 0)
        #expect(wide.ignoredStatuses == 0)
        // Both connections run on one media clock, so the viewer's virtual arrival is on the sender's clock too.
        var shift: Int64?
        var worstDelay: Int64 = 0
        var earliest = Int64.max
        var worstShift: Int64 = 0
        for packet in received {
            let arrival = try #require(viewer.transportArrivals[packet.sent.wireSequenceNumber])
            let trueNs = viewer.nanoseconds(at: arrival.at)
            let oneWay = trueNs - Int64(packet.sent.sendTimeNs)
            // 40 ms, plus the time in the bottleneck (serialization and the queue a key frame makes).
            worstDelay = max(worstDelay, oneWay - 40_000_000)
            earliest = min(earliest, oneWay - 40_000_000)
            let reported = try #require(packet.arrivalTimeNs)
            let offset = reported - trueNs
            shift = shift ?? offset
            worstShift = max(worstShift, abs(offset - (shift ?? offset)))
        }
        let queueing = link.maximumQueueingDelay.components
        let maximumQueueingNs = queueing.seconds * 1_000_000_000 + queueing.attoseconds / 1_000_000_000
        print(
            "virtual-time TWCC arrivals: one-way 40 ms + \(earliest)...\(worstDelay) ns (bottleneck at most "
                + "\(maximumQueueingNs) ns); reported − true within \(worstShift) ns of a constant")
        // 1 200 bytes and the link's overhead at 5 Mbit/s take about 2 ms to serialize.
        #expect(earliest >= 0 && earliest <= 2_100_000, "a packet alone: 40 ms and its serialization")
        #expect(worstDelay <= maximumQueueingNs && maximumQueueingNs > 2_000_000)
        // Deltas are 250 µs ticks rounded to the nearest and accumulated in ticks, so each arrival is within half a
        // tick of the truth, and any two arrivals' errors within a tick of each other.
        #expect(worstShift <= 250_000, "reported arrivals are the true ones, shifted: worst \(worstShift) ns")
        // JSON: times in seconds, and back.
        let json = try JSONEncoder().encode(wide)
        #expect(try JSONDecoder().decode(TransportWideCCStatistics.self, from: json) == wide)
        #expect(String(decoding: json, as: UTF8.self).contains("\"lastFeedbackReceived\":5."))
        let newest = try #require(wide.lastFeedbackNewestArrival)
        let lastFeedback = try #require(wide.lastFeedbackReceived)
        #expect(newest > .seconds(4) && lastFeedback > .seconds(5))
    }

    @Test("5 % loss: the losses reported are the link's, RTX packets carry numbers of their own")
    func lossesAndRetransmissions() throws {
        var forward = LinkConfiguration(delay: .milliseconds(20))
        forward.schedule = [.setLossRate(0.05, at: .seconds(1))]
        let scenario = try Scenario(seed: 22, forward: forward, transportWideCC: true)
        scenario.run(for: .seconds(7))
        let publisher = scenario.publisher
        let viewer = scenario.viewer
        let sent = try #require(publisher.connection.mediaStatistics)
        let wide = publisher.connection.statistics.transportWideCC
        let link = scenario.network.statistics(from: Self.publisherAddress, to: Self.viewerAddress)
        let reportedLost = Set(
            publisher.transportReports.flatMap(\.packets).filter { !$0.isReceived }.map(\.sent.wireSequenceNumber))
        let arrived = Set(viewer.transportArrivals.keys)
        let numbered = Set(1...UInt16(wide.packetsSent))
        let missing = numbered.subtracting(arrived)
        print(
            "virtual-time TWCC loss: link lost \(link.packetsLost) datagrams, \(missing.count) numbered packets "
                + "missing, \(wide.packetsReportedLost) reported lost, \(wide.retransmissionsSent) RTX numbered")
        #expect(link.packetsLost > 10)
        #expect(wide.packetsSent == sent.packets + sent.retransmissions + sent.paddingPackets)
        #expect(wide.retransmissionsSent == sent.retransmissions && sent.retransmissions > 0)
        // The link also drops sender reports (RTCP, not numbered): every other loss is a numbered packet.
        #expect(missing.count <= link.packetsLost && missing.count >= link.packetsLost - sent.rtcpSent)
        // Every loss reported is a real one, and every real one was reported unless nothing arrived after it.
        #expect(reportedLost.isSubset(of: missing))
        let lastArrived = arrived.max() ?? 0
        #expect(missing.subtracting(reportedLost).allSatisfy { $0 > lastArrived })
        #expect(wide.packetsReportedLost == reportedLost.count)
        #expect(wide.packetsReportedReceived == arrived.count)
        // Every packet arrived under its own number: RTX ones too, never a media packet's number again.
        #expect(viewer.transportNumbered == arrived.count, "no number arrived twice")
        let rtxNumbers = viewer.transportArrivals.filter(\.value.isRTX).keys
        #expect(rtxNumbers.count == viewer.rtxReceived && viewer.rtxReceived > 0)
        #expect(viewer.missing.isEmpty, "RTX still repairs everything")
    }
}
