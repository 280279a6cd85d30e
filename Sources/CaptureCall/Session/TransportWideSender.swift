package import CaptureRTP

/// The sending side of transport-wide congestion control for one transport: the one counter that numbers every RTP
/// packet the transport sends (media and RTX of every SSRC alike), the ``TransportSendHistory`` that remembers
/// them, and what the peer's ``RTCPTransportFeedback`` said about them.
///
/// ## Numbering
/// A sender writes the next number into the packet's ``TransportSequenceNumberExtension`` element with
/// ``stamp(_:at:)`` just before it protects the packet (SRTP authenticates the header, so the number cannot change
/// after), and calls ``sent(size:ssrc:isRetransmission:nowNs:)`` once the packet was handed to the transport: only
/// then is the number used up and recorded. A packet that does not leave (no route, a send error) gives its number
/// to the next one, so that the peer never sees a gap that is not a loss. A retransmission is a new packet on the
/// transport: its copy gets a fresh number.
///
/// ## Size
/// The size recorded is the RTP packet's, header, extensions and padding included, before SRTP: neither the SRTP
/// authentication tag nor IP, UDP or TURN overhead are counted (as libwebrtc's `TransportFeedbackAdapter` counts
/// it; a rate controller adds the overhead it wants).
///
/// ## Feedback
/// ``process(_:nowNs:)`` turns a feedback message into a ``TransportFeedbackReport`` and counts what it reported.
/// Feedback is the peer's input: anything it says about packets never sent or already reported is counted by the
/// history and ignored.
///
/// ## Threading
/// Not thread-safe and not `Sendable`: one owner (the connection's, or the sender's) calls it.
///
/// ## Performance
/// ``stamp(_:at:)`` and ``sent(size:ssrc:isRetransmission:nowNs:)`` allocate nothing (the history is a ring allocated
/// by the initializer); ``process(_:nowNs:)`` allocates its report.
package final class TransportWideSender {
    /// What the sender has numbered and learnt.
    package struct Statistics: Sendable, Hashable {
        /// RTP packets sent with a transport-wide sequence number (retransmissions included).
        package var packetsSent = 0
        /// Of those, retransmissions.
        package var retransmissionsSent = 0
        /// Feedback messages processed.
        package var feedbackMessages = 0
        /// Packets the feedback reported received (each packet once).
        package var packetsReportedReceived = 0
        /// Packets the feedback reported lost (each packet once; one that a later message reports received, having
        /// arrived late, counts here and in ``packetsReportedReceived``).
        package var packetsReportedLost = 0
        /// Statuses about packets never sent or forgotten, ignored.
        package var unknownStatuses = 0
        /// Statuses repeating what an earlier message said, ignored.
        package var repeatedStatuses = 0
        /// The latest arrival the last feedback reported, mapped onto our clock (see
        /// ``TransportPacketResult/arrivalTimeNs``), or `nil` before any feedback reported a packet received.
        package var lastNewestArrivalNs: Int64?
        /// When the last feedback message arrived (our clock, nanoseconds), or `nil` before the first.
        package var lastFeedbackAtNs: UInt64?

        /// Nothing sent, nothing learnt.
        package init() {}
    }

    /// The negotiated RFC 8285 id of the transport-wide sequence number extension.
    package let extensionID: UInt8
    /// The packets sent, and what feedback said about them.
    package private(set) var history: TransportSendHistory
    /// The number the next packet will carry.
    package private(set) var nextSequenceNumber: UInt16
    /// What only the sender counts; the rest of ``statistics`` is the history's own counting.
    private var counters = Statistics()

    /// The counters so far: packets sent, feedback messages and ignored statuses as the history counted them, the
    /// rest as the sender did.
    package var statistics: Statistics {
        var statistics = counters
        statistics.packetsSent = history.statistics.packetsRecorded
        statistics.feedbackMessages = history.statistics.feedbackMessages
        statistics.unknownStatuses = history.statistics.unknownStatuses
        statistics.repeatedStatuses = history.statistics.repeatedStatuses
        return statistics
    }

    /// A sender numbering from `initialSequenceNumber` (libwebrtc starts at 1; any start works, the history unwraps),
    /// with a history of `historyCapacity` packets allocated now.
    package init(
        extensionID: UInt8, initialSequenceNumber: UInt16 = 1,
        historyCapacity: Int = TransportSendHistory.defaultCapacity
    ) {
        self.extensionID = extensionID
        nextSequenceNumber = initialSequenceNumber
        history = TransportSendHistory(capacity: historyCapacity)
    }

    /// Bytes sent and not yet reported on by any feedback.
    package var bytesInFlight: Int { history.bytesInFlight }

    /// Writes the next number at `offset` of `buffer` (the element's two data bytes) and returns it; the number is
    /// used up only by ``sent(size:ssrc:isRetransmission:nowNs:)``. Writes nothing when the two bytes do not fit.
    @discardableResult
    package func stamp(_ buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> UInt16 {
        let number = nextSequenceNumber
        guard offset >= 0, offset + TransportSequenceNumberExtension.dataSize <= buffer.count else { return number }
        buffer[offset] = UInt8(truncatingIfNeeded: number >> 8)
        buffer[offset + 1] = UInt8(truncatingIfNeeded: number)
        return number
    }

    /// Writes the next number into the element with ``extensionID`` of the RTP packet in `buffer[0..<length]`,
    /// wherever it is (an RTX copy of a stored packet); whether the packet had one. Allocates nothing.
    package func stamp(packet buffer: UnsafeMutableRawBufferPointer, length: Int) -> Bool {
        let packet = UnsafeRawBufferPointer(rebasing: buffer[0..<min(max(0, length), buffer.count)])
        guard let offset = TransportSequenceNumberExtension.dataOffset(in: packet, id: extensionID) else {
            return false
        }
        stamp(buffer, at: offset)
        return true
    }

    /// The packet last stamped left at `nowNs` with `size` bytes of RTP (see the type's discussion) on `ssrc`, as
    /// part of probe cluster `probeClusterID` if any: its number is recorded and used up.
    package func sent(
        size: Int, ssrc: UInt32, isRetransmission: Bool, nowNs: UInt64, probeClusterID: Int32? = nil
    ) {
        history.record(
            sequenceNumber: nextSequenceNumber, sendTimeNs: nowNs, size: size, ssrc: ssrc,
            isRetransmission: isRetransmission, probeClusterID: probeClusterID)
        nextSequenceNumber &+= 1
        if isRetransmission { counters.retransmissionsSent += 1 }
    }

    /// Applies a feedback message that arrived at `nowNs`; returns what it newly reported.
    package func process(_ feedback: RTCPTransportFeedback, nowNs: UInt64) -> TransportFeedbackReport {
        let report = history.process(feedback, receivedAtNs: nowNs)
        counters.lastFeedbackAtNs = nowNs
        var newest: Int64?
        for packet in report.packets {
            if let arrival = packet.arrivalTimeNs {
                counters.packetsReportedReceived += 1
                newest = max(newest ?? arrival, arrival)
            } else {
                counters.packetsReportedLost += 1
            }
        }
        if let newest { counters.lastNewestArrivalNs = newest }
        return report
    }
}
