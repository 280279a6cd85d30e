/// Groups packets into send-time bursts and yields the deltas between consecutive groups.
///
/// ## What it is
///
/// The first stage of the delay-based estimator (draft-ietf-rmcat-gcc-02 §5.2, "pre-filtering"): packets sent within
/// 5 ms of a group's first packet form one group; a packet that arrives within 5 ms of the group's last arrival with
/// a negative propagation delta (a burst the network delivered back to back, within 100 ms of the group's first
/// arrival) joins the group too. When a new group starts, the previous two complete groups give one delta triple:
/// send delta (between the groups' last send times), arrival delta (between their last arrivals) and size delta.
///
/// ## libwebrtc
///
/// Follows `modules/congestion_controller/goog_cc/inter_arrival_delta.cc`: a packet sent before the current group's
/// first packet is dropped (reordered); a group that arrives before the previous one is dropped, and three such in a
/// row reset the stage; an arrival delta that outruns the local feedback clock's delta by 3 s or more (the remote
/// clock jumped) resets it. Times are nanoseconds rather than libwebrtc's microseconds.
///
/// ## Threading
///
/// A plain value, not thread-safe; owned by one ``SendSideBandwidthEstimator``.
struct InterArrivalGrouping {
    /// The deltas between two consecutive complete groups.
    struct Deltas: Equatable {
        /// Send time of the later group minus the earlier one's (ns).
        var send: Int64
        /// Arrival time of the later group minus the earlier one's (ns).
        var arrival: Int64
        /// Bytes of the later group minus the earlier one's.
        var size: Int
    }

    private struct Group {
        var size = 0
        var firstSend: Int64 = 0
        var send: Int64 = 0
        var firstArrival: Int64 = 0
        var completeArrival: Int64 = 0
        var lastSystem: Int64 = 0
        var isEmpty = true
    }

    static let groupLength: Int64 = 5 * Nanoseconds.perMillisecond
    static let burstDeltaThreshold: Int64 = 5 * Nanoseconds.perMillisecond
    static let maxBurstDuration: Int64 = 100 * Nanoseconds.perMillisecond
    static let arrivalOffsetThreshold: Int64 = 3 * Nanoseconds.perSecond
    static let reorderedResetThreshold = 3

    private var current = Group()
    private var previous = Group()
    private var consecutiveReordered = 0
    /// How many times the stage reset itself (clock jump or sustained reordering).
    private(set) var resets = 0

    /// Adds one received packet; returns the deltas when it closes a group and two complete groups exist.
    ///
    /// - Parameters: `send` and `arrival` in ns on their clocks; `system` the local instant the feedback carrying
    ///   it arrived (ns); `size` in bytes.
    mutating func add(send: Int64, arrival: Int64, system: Int64, size: Int) -> Deltas? {
        var result: Deltas?
        if current.isEmpty {
            current.firstSend = send
            current.send = send
            current.firstArrival = arrival
            current.isEmpty = false
        } else if current.firstSend > send {
            return nil  // Reordered: sent before the group began.
        } else if startsNewGroup(send: send, arrival: arrival) {
            if !previous.isEmpty {
                let sendDelta = Nanoseconds.difference(current.send, previous.send)
                let arrivalDelta = Nanoseconds.difference(current.completeArrival, previous.completeArrival)
                let systemDelta = Nanoseconds.difference(current.lastSystem, previous.lastSystem)
                if Nanoseconds.difference(arrivalDelta, systemDelta) >= Self.arrivalOffsetThreshold {
                    reset()
                    return nil
                }
                if arrivalDelta < 0 {
                    consecutiveReordered += 1
                    if consecutiveReordered >= Self.reorderedResetThreshold { reset() }
                    return nil
                }
                consecutiveReordered = 0
                result = Deltas(send: sendDelta, arrival: arrivalDelta, size: current.size &- previous.size)
            }
            previous = current
            current = Group(firstSend: send, send: send, firstArrival: arrival, isEmpty: false)
        } else {
            current.send = max(current.send, send)
        }
        current.size = current.size &+ max(0, size)
        current.completeArrival = arrival
        current.lastSystem = system
        return result
    }

    /// Forgets every group (the stream timed out or the clocks jumped).
    mutating func reset() {
        current = Group()
        previous = Group()
        consecutiveReordered = 0
        resets += 1
    }

    private func startsNewGroup(send: Int64, arrival: Int64) -> Bool {
        if belongsToBurst(send: send, arrival: arrival) { return false }
        return Nanoseconds.difference(send, current.firstSend) > Self.groupLength
    }

    private func belongsToBurst(send: Int64, arrival: Int64) -> Bool {
        let arrivalDelta = Nanoseconds.difference(arrival, current.completeArrival)
        let sendDelta = Nanoseconds.difference(send, current.send)
        if sendDelta == 0 { return true }
        let propagationDelta = Nanoseconds.difference(arrivalDelta, sendDelta)
        return propagationDelta < 0 && arrivalDelta <= Self.burstDeltaThreshold
            && Nanoseconds.difference(arrival, current.firstArrival) < Self.maxBurstDuration
    }
}
