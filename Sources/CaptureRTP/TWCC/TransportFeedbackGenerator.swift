/// The receiving side of transport-wide congestion control: remembers when each transport-wide sequence number
/// arrived and turns that into ``RTCPTransportFeedback`` messages at a fixed interval, as libwebrtc's
/// `TransportSequenceNumberFeedbackGenerator` (formerly `RemoteEstimatorProxy`) does.
///
/// ## Use
/// Call ``record(sequenceNumber:arrivalTimeNs:mediaSSRC:)`` for every received packet that carries the
/// ``TransportSequenceNumberExtension`` (RTX and padding included), and ``poll(nowNs:)`` when ``nextDeadlineNs`` has
/// come; send what it returns (each message in its own datagram or in a compound). Times are the receiver's
/// monotonic nanoseconds (`CLOCK_MONOTONIC`, as everywhere in `CaptureRTP`); nothing reads a clock.
///
/// ## What is reported
/// - Sequence numbers are unwrapped to 64 bits. Each message starts where the last one stopped (so a packet still
///   missing then is reported again, now received or still not) and runs to the highest number received; packets
///   missing at its end wait for the next one.
/// - A packet that arrives after it was reported missing moves the start back, so the next message covers it again
///   and the sender learns it arrived (libwebrtc's rule; Janus instead drops it). A duplicate changes nothing.
/// - A message ends, and the next one starts, when it would exceed ``Configuration/maximumPacketSize`` bytes, hold
///   65 535 statuses, or need a receive delta beyond ±8.19 s (16 bits of 250 µs). Each message takes the next
///   feedback count (8 bits, wrapping). Deltas are rounded to the nearest tick and accumulated in ticks, so rounding
///   never drifts.
/// - History: a fixed ring of ``Configuration/historyCapacity`` arrival times, allocated once. Once everything has
///   been reported, entries older than ``Configuration/backWindowNs`` (500 ms, libwebrtc's `kBackWindow`) before the
///   newest arrival are forgotten (all but the newest). A packet older than the whole ring is counted as
///   ``Statistics/tooOld`` and not reported.
///
/// The interval is 100 ms by default, as libwebrtc's (which adapts it between 50 and 250 ms to keep feedback near
/// 5 % of the estimate; set ``intervalNs`` to do so); Janus sends every 200 ms (`twcc_period`).
///
/// ## Threading
/// A value with no locks: use it from one thread or actor. ``record(sequenceNumber:arrivalTimeNs:mediaSSRC:)``
/// allocates nothing; ``poll(nowNs:)`` allocates the messages it returns.
public struct TransportFeedbackGenerator: Sendable {
    /// How a generator reports.
    public struct Configuration: Sendable, Hashable, Codable {
        /// libwebrtc's default feedback interval (100 ms).
        public static let defaultIntervalNs: UInt64 = 100_000_000
        /// The SSRC the feedback is sent from.
        public var senderSSRC: UInt32
        /// The media SSRC named in feedback until a packet's own is recorded.
        public var mediaSSRC: UInt32
        /// The time between feedback messages in nanoseconds.
        public var intervalNs: UInt64
        /// The largest feedback message in bytes (RTCP header included; at least 64).
        public var maximumPacketSize: Int
        /// The number of sequence numbers remembered (rounded up to a power of two, 64...32 768).
        public var historyCapacity: Int
        /// How long received packets are kept once reported, in nanoseconds.
        public var backWindowNs: UInt64

        /// Creates a configuration: 100 ms, 1200-byte messages, 8192 packets of history, a 500 ms back window.
        public init(
            senderSSRC: UInt32, mediaSSRC: UInt32 = 0, intervalNs: UInt64 = defaultIntervalNs,
            maximumPacketSize: Int = 1200, historyCapacity: Int = 1 << 13, backWindowNs: UInt64 = 500_000_000
        ) {
            self.senderSSRC = senderSSRC
            self.mediaSSRC = mediaSSRC
            self.intervalNs = intervalNs
            self.maximumPacketSize = maximumPacketSize
            self.historyCapacity = historyCapacity
            self.backWindowNs = backWindowNs
        }
    }

    /// What a generator has seen and sent.
    public struct Statistics: Sendable, Hashable, Codable {
        /// Packets recorded (duplicates and packets too old not counted).
        public var packetsRecorded = 0
        /// Packets whose sequence number had already arrived.
        public var duplicates = 0
        /// Packets older than the history holds, not reported.
        public var tooOld = 0
        /// Feedback messages built.
        public var feedbackMessages = 0
        /// Packets reported as received, counting every report (a late packet's range is reported again).
        public var reportedReceived = 0
        /// Packets reported as not received, counting every report.
        public var reportedNotReceived = 0

        /// No packets, no messages.
        public init() {}
    }

    /// The configuration, its capacity and sizes clamped to their bounds.
    public let configuration: Configuration
    /// The feedback interval in nanoseconds (may be changed between polls).
    public var intervalNs: UInt64
    /// What has been seen and sent.
    public private(set) var statistics = Statistics()
    /// When ``poll(nowNs:)`` will next send, or `nil` before the first packet.
    public private(set) var nextDeadlineNs: UInt64?

    private static let notReceived = UInt64.max
    private var arrivals: [UInt64]
    private let mask: Int64
    private var unwrapper = SequenceNumberUnwrapper()
    /// The sequence numbers held: `begin ..< end` (empty when equal).
    private var begin: Int64 = 0
    private var end: Int64 = 0
    /// The first sequence number the next message reports, or `nil` before the first packet.
    private var windowStart: Int64?
    private var feedbackCount: UInt8 = 0
    private var mediaSSRC: UInt32

    /// Creates a generator; its history is allocated here, once.
    public init(configuration: Configuration) {
        var configuration = configuration
        configuration.maximumPacketSize = max(64, configuration.maximumPacketSize)
        var capacity = 64
        while capacity < min(configuration.historyCapacity, 1 << 15) { capacity <<= 1 }
        configuration.historyCapacity = capacity
        self.configuration = configuration
        intervalNs = configuration.intervalNs
        mediaSSRC = configuration.mediaSSRC
        arrivals = Array(repeating: Self.notReceived, count: capacity)
        mask = Int64(capacity - 1)
    }

    /// Records that the packet with transport-wide `sequenceNumber` arrived at `arrivalTimeNs`; `mediaSSRC`, when
    /// given, is named in the next feedback (libwebrtc names the last media SSRC seen).
    public mutating func record(sequenceNumber: UInt16, arrivalTimeNs: UInt64, mediaSSRC: UInt32? = nil) {
        if let mediaSSRC { self.mediaSSRC = mediaSSRC }
        let arrival = min(arrivalTimeNs, Self.notReceived - 1)
        if nextDeadlineNs == nil { nextDeadlineNs = arrival &+ intervalNs }
        let sequence = unwrapper.unwrap(sequenceNumber)
        if let windowStart, windowStart >= end { removeOldPackets(before: sequence, arrival: arrival) }
        let capacity = mask + 1
        if begin == end {
            begin = sequence
            end = sequence + 1
        } else if sequence >= end {
            let newBegin = max(begin, sequence - capacity + 1)
            if newBegin >= end {
                begin = sequence
            } else {
                markNotReceived(from: max(end, newBegin), to: sequence)
                begin = newBegin
            }
            end = sequence + 1
        } else if sequence >= begin {
            guard arrivals[Self.slot(sequence, mask)] == Self.notReceived else {
                statistics.duplicates += 1
                return
            }
        } else {
            guard end - sequence <= capacity else {
                statistics.tooOld += 1
                return
            }
            markNotReceived(from: sequence + 1, to: begin)
            begin = sequence
        }
        arrivals[Self.slot(sequence, mask)] = arrival
        statistics.packetsRecorded += 1
        if let start = windowStart, start <= sequence {
            windowStart = max(start, begin)
        } else {
            windowStart = sequence
        }
    }

    /// The feedback due at `nowNs`: every message needed to report what arrived since the last one, once
    /// ``nextDeadlineNs`` has come (and the deadline moves one interval on); otherwise nothing.
    public mutating func poll(nowNs: UInt64) -> [RTCPTransportFeedback] {
        guard let deadline = nextDeadlineNs, nowNs >= deadline else { return [] }
        let next = deadline &+ intervalNs
        nextDeadlineNs = next > nowNs ? next : nowNs &+ intervalNs
        return makeFeedback()
    }

    /// Every message needed to report what arrived since the last one, now, whatever the deadline.
    public mutating func makeFeedback() -> [RTCPTransportFeedback] {
        guard var start = windowStart else { return [] }
        start = max(start, begin)
        var messages: [RTCPTransportFeedback] = []
        while start < end, let (message, next) = buildMessage(from: start) {
            messages.append(message)
            start = next
        }
        windowStart = start
        return messages
    }

    /// Marks `from ..< to` as not received. A `while` loop: a debug build's `for` over a `Range<Int64>` allocates.
    private mutating func markNotReceived(from: Int64, to: Int64) {
        var cleared = from
        while cleared < to {
            arrivals[Self.slot(cleared, mask)] = Self.notReceived
            cleared += 1
        }
    }

    /// The ring index of `sequence` (static, so that writing `arrivals[…]` never copies `self` in a debug build).
    private static func slot(_ sequence: Int64, _ mask: Int64) -> Int { Int(sequence & mask) }

    /// libwebrtc's `RemoveOldPackets`: drops from the front, up to `sequence`, entries not received or received more
    /// than the back window before `arrival`. Unlike libwebrtc it keeps the newest entry, so that packets missing
    /// between it and `sequence` after a pause are still reported as not received.
    private mutating func removeOldPackets(before sequence: Int64, arrival: UInt64) {
        let limit = min(sequence, end - 1)
        let hasOld = arrival >= configuration.backWindowNs
        let oldest = hasOld ? arrival - configuration.backWindowNs : 0
        while begin < limit {
            let time = arrivals[Self.slot(begin, mask)]
            guard time == Self.notReceived || (hasOld && time <= oldest) else { break }
            begin += 1
        }
    }

    /// One message from `start`, as long as fits; `nil` when nothing from `start` on has arrived.
    private mutating func buildMessage(from start: Int64) -> (RTCPTransportFeedback, next: Int64)? {
        var first = start
        while first < end && arrivals[Self.slot(first, mask)] == Self.notReceived { first += 1 }
        guard first < end else { return nil }
        let tick = RTCPTransportFeedback.deltaTickNs
        let referenceTicks = arrivals[Self.slot(first, mask)] / UInt64(RTCPTransportFeedback.referenceTimeTickNs)
        // Times past 2^63 ns (292 years of uptime) are clamped, never trapped on.
        var lastNs = Int64(clamping: referenceTicks * UInt64(RTCPTransportFeedback.referenceTimeTickNs))
        var encoder = TransportFeedbackChunkEncoder()
        var deltaBytes = 0
        var statuses: [RTCPTransportFeedback.PacketStatus] = []
        var missing = 0
        var next = start
        for sequence in start..<end {
            let arrival = arrivals[Self.slot(sequence, mask)]
            guard arrival != Self.notReceived else {
                missing += 1
                continue
            }
            let elapsed = Int64(clamping: arrival) - lastNs
            let rounded = (elapsed + (elapsed >= 0 ? tick / 2 : -tick / 2)) / tick
            guard let delta = Int16(exactly: rounded),
                statuses.count + missing + 1 <= RTCPTransportFeedback.maximumPacketStatusCount
            else { break }
            let status = RTCPTransportFeedback.PacketStatus.received(delta: delta)
            var trial = encoder
            for _ in 0..<missing { _ = trial.add(0) }
            _ = trial.add(status.symbol)
            let deltaSize = RTCPTransportFeedback.deltaSize(symbol: status.symbol)
            guard
                RTCPTransportFeedback.serializedSize(chunks: trial.chunkCount, deltaBytes: deltaBytes + deltaSize)
                    <= configuration.maximumPacketSize
            else { break }
            encoder = trial
            deltaBytes += deltaSize
            statuses.append(contentsOf: repeatElement(.notReceived, count: missing))
            statuses.append(status)
            statistics.reportedNotReceived += missing
            statistics.reportedReceived += 1
            missing = 0
            lastNs &+= Int64(delta) * tick
            next = sequence + 1
        }
        guard !statuses.isEmpty else { return nil }
        let message = RTCPTransportFeedback(
            senderSSRC: configuration.senderSSRC, mediaSSRC: mediaSSRC,
            baseSequenceNumber: SequenceNumberUnwrapper.wrap(start),
            referenceTime: RTCPTransportFeedback.signExtend24(UInt32(truncatingIfNeeded: referenceTicks)),
            feedbackPacketCount: feedbackCount, packets: statuses)
        feedbackCount &+= 1
        statistics.feedbackMessages += 1
        return (message, next)
    }
}
