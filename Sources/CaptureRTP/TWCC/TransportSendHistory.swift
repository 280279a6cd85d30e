/// The sending side of transport-wide congestion control: remembers, for each transport-wide sequence number it
/// put on the wire, when it was sent, how big it was and on which stream, and turns each ``RTCPTransportFeedback``
/// into per-packet results (sent when, how big, arrived when or lost), as libwebrtc's `TransportFeedbackAdapter`
/// does for GoogCC.
///
/// ## Use
/// Call ``record(sequenceNumber:sendTimeNs:size:ssrc:isRetransmission:probeClusterID:)`` for each packet as it
/// leaves (media, RTX and probes alike, with the number written in its ``TransportSequenceNumberExtension``), and
/// ``process(_:receivedAtNs:)`` for each feedback message received.
///
/// ## What it does
/// - Sequence numbers are unwrapped to 64 bits as they are recorded; a feedback's base number is placed nearest to
///   the highest number sent. Statuses for numbers never sent (beyond the highest) or no longer remembered are
///   counted as ``TransportFeedbackReport/unknownStatuses`` and ignored.
/// - Arrival times are mapped onto the sender's clock: the first feedback's reference time is taken to be the moment
///   it arrived; each later one moves that by the difference of the reference times (24 bits of 64 ms, wrapping).
///   A mapping that would go negative or overflow starts again from the arrival of the feedback, as libwebrtc does.
/// - A packet is reported once as received (later reports of it are ignored) and at most once as lost; a packet
///   reported lost and later received is reported again, as received. libwebrtc reports a repeated loss again; this
///   history does not, so that one loss is not counted twice when a receiver repeats a range.
/// - ``bytesInFlight`` counts bytes sent and not yet reported on; a packet forgotten unreported (the ring wrapped
///   before any feedback named it) leaves it too, and so does every packet older than the newest one a feedback
///   named, reported or not (libwebrtc's `TransportFeedbackAdapter` does the same): a lost feedback message must
///   not leave its packets "in flight" for ever, or a congestion window would close on them.
///
/// ## Storage
/// A ring of ``capacity`` entries (2¹⁴ by default: 16 384 packets, over 10 s of a 10 Mbit/s stream of 1200-byte
/// packets), allocated once by the initializer; recording overwrites the oldest entry and allocates nothing.
///
/// ## Threading
/// A value with no locks: use it from one thread or actor. ``process(_:receivedAtNs:)`` allocates its report.
public struct TransportSendHistory: Sendable {
    /// The default number of packets remembered.
    public static let defaultCapacity = 1 << 14

    /// Counters over the history's life.
    public struct Statistics: Sendable, Hashable, Codable {
        /// Packets recorded.
        public var packetsRecorded = 0
        /// Feedback messages processed.
        public var feedbackMessages = 0
        /// Statuses about packets never sent or forgotten.
        public var unknownStatuses = 0
        /// Statuses repeating what an earlier message said.
        public var repeatedStatuses = 0
        /// Packets overwritten in the ring before any feedback named them.
        public var forgottenUnreported = 0
        /// Times the receiver's clock was mapped onto ours afresh because the reference times made no sense.
        public var timeBaseResets = 0

        /// All zero.
        public init() {}
    }

    private enum State: UInt8 {
        /// `passed`: not reported, but older than a packet a feedback covered, so no longer in flight.
        case empty, pending, passed, reportedLost, acknowledged
    }

    /// One ring slot (32 bytes).
    private struct Entry {
        var sequence: Int64 = -1
        var sendTimeNs: UInt64 = 0
        var size: UInt32 = 0
        var ssrc: UInt32 = 0
        var probeClusterID: Int32 = 0
        var hasProbeCluster = false
        var isRetransmission = false
        var state = State.empty
    }

    /// The number of packets remembered (a power of two).
    public let capacity: Int
    /// Bytes sent and not yet reported on by any feedback.
    public private(set) var bytesInFlight = 0
    /// Counters.
    public private(set) var statistics = Statistics()
    /// The highest sequence number recorded, unwrapped, or `nil` before the first.
    public private(set) var highestSequenceNumber: Int64?

    private var entries: [Entry]
    private let mask: Int64
    private var unwrapper = SequenceNumberUnwrapper()
    /// The sender-clock time (ns) of the last feedback's reference time, and that reference time.
    private var timeBase: (offsetNs: Int64, referenceTime: Int32)?
    /// The lowest sequence number that may still count in ``bytesInFlight`` (every older one was covered by a
    /// feedback), or `nil` before the first record.
    private var inFlightFrom: Int64?

    /// Creates a history of `capacity` packets (rounded up to a power of two, 64 at least), allocated now.
    public init(capacity: Int = defaultCapacity) {
        var rounded = 64
        while rounded < min(capacity, 1 << 20) { rounded <<= 1 }
        self.capacity = rounded
        mask = Int64(rounded - 1)
        entries = Array(repeating: Entry(), count: rounded)
    }

    /// Records a packet leaving with transport-wide `sequenceNumber` at `sendTimeNs`; returns the number unwrapped.
    /// Allocates nothing.
    @discardableResult
    public mutating func record(
        sequenceNumber: UInt16, sendTimeNs: UInt64, size: Int, ssrc: UInt32, isRetransmission: Bool = false,
        probeClusterID: Int32? = nil
    ) -> Int64 {
        let sequence = unwrapper.unwrap(sequenceNumber)
        highestSequenceNumber = max(highestSequenceNumber ?? sequence, sequence)
        if inFlightFrom == nil { inFlightFrom = sequence }
        let index = Int(sequence & mask)
        if entries[index].state == .pending { bytesInFlight -= Int(entries[index].size) }
        if entries[index].state == .pending || entries[index].state == .passed { statistics.forgottenUnreported += 1 }
        let stored = UInt32(clamping: max(0, size))
        entries[index] = Entry(
            sequence: sequence, sendTimeNs: sendTimeNs, size: stored, ssrc: ssrc, probeClusterID: probeClusterID ?? 0,
            hasProbeCluster: probeClusterID != nil, isRetransmission: isRetransmission, state: .pending)
        bytesInFlight += Int(stored)
        statistics.packetsRecorded += 1
        return sequence
    }

    /// The packet recorded under the unwrapped `sequenceNumber`, if the history still holds it.
    public func packet(sequenceNumber: Int64) -> TransportSentPacket? {
        let entry = entries[Int(sequenceNumber & mask)]
        guard entry.state != .empty, entry.sequence == sequenceNumber else { return nil }
        return Self.sentPacket(entry)
    }

    /// Applies a feedback message that arrived at `receivedAtNs` (the sender's monotonic nanoseconds).
    public mutating func process(_ feedback: RTCPTransportFeedback, receivedAtNs: UInt64) -> TransportFeedbackReport {
        statistics.feedbackMessages += 1
        let offset = mapReferenceTime(feedback.referenceTime, receivedAtNs: receivedAtNs)
        var report = TransportFeedbackReport(
            receivedAtNs: receivedAtNs, feedbackPacketCount: feedback.feedbackPacketCount, packets: [],
            newlyAckedBytes: 0, unknownStatuses: 0, repeatedStatuses: 0, bytesInFlight: bytesInFlight)
        report.packets.reserveCapacity(feedback.packets.count)
        guard let highest = highestSequenceNumber else {
            report.unknownStatuses = feedback.packets.count
            statistics.unknownStatuses += feedback.packets.count
            return report
        }
        let base =
            highest
            + Int64(Int16(bitPattern: feedback.baseSequenceNumber &- SequenceNumberUnwrapper.wrap(highest)))
        var ticks: Int64 = 0
        // The newest packet of ours the message named: everything before it is no longer in flight.
        var newestNamed: Int64?
        for (index, status) in feedback.packets.enumerated() {
            var arrival: Int64?
            if let delta = status.delta {
                // At most 65 535 × 32 768 ticks: the product fits; the sum with the offset saturates.
                ticks += Int64(delta)
                let (sum, overflow) = offset.addingReportingOverflow(ticks * RTCPTransportFeedback.deltaTickNs)
                arrival = overflow ? (ticks < 0 ? .min : .max) : sum
            }
            let sequence = base + Int64(index)
            let slot = Int(sequence & mask)
            guard sequence <= highest, entries[slot].sequence == sequence, entries[slot].state != .empty else {
                report.unknownStatuses += 1
                continue
            }
            newestNamed = sequence
            switch (entries[slot].state, arrival) {
            case (.acknowledged, _), (.reportedLost, nil):
                report.repeatedStatuses += 1
                continue
            case (.pending, nil):
                entries[slot].state = .reportedLost
                bytesInFlight -= Int(entries[slot].size)
            case (.passed, nil):
                entries[slot].state = .reportedLost
            case (.passed, .some):
                entries[slot].state = .acknowledged
                report.newlyAckedBytes += Int(entries[slot].size)
            case (.pending, .some):
                entries[slot].state = .acknowledged
                bytesInFlight -= Int(entries[slot].size)
                report.newlyAckedBytes += Int(entries[slot].size)
            case (.reportedLost, .some):
                entries[slot].state = .acknowledged
                report.newlyAckedBytes += Int(entries[slot].size)
            case (.empty, _):
                continue
            }
            report.packets.append(TransportPacketResult(sent: Self.sentPacket(entries[slot]), arrivalTimeNs: arrival))
        }
        if let newestNamed { passUnreported(upTo: newestNamed) }
        report.bytesInFlight = bytesInFlight
        statistics.unknownStatuses += report.unknownStatuses
        statistics.repeatedStatuses += report.repeatedStatuses
        return report
    }

    /// Every packet up to `covered` that no feedback reported is no longer in flight (its feedback was lost, or the
    /// receiver never numbered it). Walks each packet once over the history's life: allocates nothing.
    private mutating func passUnreported(upTo covered: Int64) {
        guard let from = inFlightFrom, covered >= from else { return }
        var sequence = max(from, covered - Int64(capacity) + 1)
        while sequence <= covered {
            let slot = Int(sequence & mask)
            if entries[slot].sequence == sequence, entries[slot].state == .pending {
                entries[slot].state = .passed
                bytesInFlight -= Int(entries[slot].size)
            }
            sequence += 1
        }
        inFlightFrom = covered + 1
    }

    /// The sender-clock time of `referenceTime`, updating the mapping.
    private mutating func mapReferenceTime(_ referenceTime: Int32, receivedAtNs: UInt64) -> Int64 {
        let fresh = Int64(clamping: receivedAtNs)
        guard let base = timeBase else {
            timeBase = (fresh, referenceTime)
            return fresh
        }
        // The nearest difference modulo 2^24 units of 64 ms.
        let wrap: Int64 = 1 << 24
        var units = (Int64(referenceTime) - Int64(base.referenceTime)) % wrap
        if units >= wrap / 2 { units -= wrap }
        if units < -wrap / 2 { units += wrap }
        let (moved, overflow) = base.offsetNs.addingReportingOverflow(units * RTCPTransportFeedback.referenceTimeTickNs)
        let offset: Int64
        if overflow || moved < 0 {
            statistics.timeBaseResets += 1
            offset = fresh
        } else {
            offset = moved
        }
        timeBase = (offset, referenceTime)
        return offset
    }

    private static func sentPacket(_ entry: Entry) -> TransportSentPacket {
        TransportSentPacket(
            sequenceNumber: entry.sequence, sendTimeNs: entry.sendTimeNs, size: Int(entry.size), ssrc: entry.ssrc,
            isRetransmission: entry.isRetransmission, probeClusterID: entry.hasProbeCluster ? entry.probeClusterID : nil
        )
    }
}
