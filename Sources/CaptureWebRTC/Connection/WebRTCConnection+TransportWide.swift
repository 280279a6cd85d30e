internal import CaptureCall
package import CaptureRTP

extension WebRTCConnection {
    // MARK: Transport-wide congestion control

    /// One transport-wide feedback message's report, arrived at `nowNs`: the congestion controller estimates from it
    /// (`CongestionControl`), and the report is kept in a small fixed buffer (``pollTransportFeedback()``) for tests
    /// and tools; the counters are the ``TransportWideSender``'s.
    func onTransportFeedback(_ report: TransportFeedbackReport, at nowNs: UInt64) {
        transportReports.append(report)
        estimate(from: report, nowNs: nowNs)
    }

    /// The oldest transport-wide feedback report not yet taken, or `nil`. The connection keeps the last 16; older
    /// ones are overwritten (counted in ``transportFeedbackReportsOverwritten``).
    package func pollTransportFeedback() -> TransportFeedbackReport? { transportReports.pop() }

    /// Reports overwritten before anyone took them.
    package var transportFeedbackReportsOverwritten: Int { transportReports.overwritten }

    /// Sends the transport-wide feedback that is due at `nowNs`, one SRTCP datagram per message.
    func sendTransportFeedbackIfDue(nowNs: UInt64) {
        guard let due = feedbackGenerator?.nextDeadlineNs, nowNs >= due,
            let messages = feedbackGenerator?.poll(nowNs: nowNs)
        else { return }
        for message in messages where sendFeedback([.transportFeedback(message)]) {
            transportFeedbackSent += 1
        }
    }

    /// The transport-wide figures both ways.
    var transportWideStatistics: TransportWideCCStatistics {
        var figures = TransportWideCCStatistics()
        if let transportWide {
            let sent = transportWide.statistics
            figures.isSending = true
            figures.packetsSent = sent.packetsSent
            figures.retransmissionsSent = sent.retransmissionsSent
            figures.feedbackReceived = sent.feedbackMessages
            figures.packetsReportedReceived = sent.packetsReportedReceived
            figures.packetsReportedLost = sent.packetsReportedLost
            figures.ignoredStatuses = sent.unknownStatuses + sent.repeatedStatuses
            figures.bytesInFlight = transportWide.bytesInFlight
            figures.lastFeedbackNewestArrival = sent.lastNewestArrivalNs.map {
                .nanoseconds($0 &- Int64(clamping: startNs))
            }
            figures.lastFeedbackReceived = sent.lastFeedbackAtNs.map { .nanoseconds(Int64(clamping: $0 &- startNs)) }
        }
        if let feedbackGenerator {
            figures.isReceiving = true
            figures.packetsReceived = feedbackGenerator.statistics.packetsRecorded
        }
        figures.feedbackSent = transportFeedbackSent
        addEstimate(to: &figures)
        return figures
    }
}

/// The last few transport-wide feedback reports, oldest first, in a fixed ring: a report that finds it full
/// overwrites the oldest.
struct TransportReportBuffer {
    private var slots: [TransportFeedbackReport?]
    private var head = 0
    private(set) var count = 0
    /// Reports overwritten before they were taken.
    private(set) var overwritten = 0

    /// A ring of `capacity` reports (1 at least), allocated now.
    init(capacity: Int) {
        slots = Array(repeating: nil, count: max(1, capacity))
    }

    /// Keeps `report`, overwriting the oldest when full.
    mutating func append(_ report: TransportFeedbackReport) {
        if count == slots.count {
            head = (head + 1) % slots.count
            count -= 1
            overwritten += 1
        }
        slots[(head + count) % slots.count] = report
        count += 1
    }

    /// Takes the oldest report.
    mutating func pop() -> TransportFeedbackReport? {
        guard count > 0 else { return nil }
        defer {
            slots[head] = nil
            head = (head + 1) % slots.count
            count -= 1
        }
        return slots[head]
    }
}
