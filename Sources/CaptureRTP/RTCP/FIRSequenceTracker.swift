/// De-duplicates Full Intra Requests (RFC 5104 §4.3.1.2): a sender retransmits an FIR with the same sequence number
/// until it sees a key frame, and the media source must answer each request once.
package struct FIRSequenceTracker: Sendable, Hashable, Codable {
    private var lastSequence: [UInt32: UInt8] = [:]

    /// Creates an empty tracker.
    package init() {}

    /// Whether `entry` is a new request for its SSRC (and remembers it); a repeat of the last number is not.
    package mutating func isNewRequest(_ entry: RTCPFIREntry) -> Bool {
        if lastSequence[entry.ssrc] == entry.sequenceNumber { return false }
        lastSequence[entry.ssrc] = entry.sequenceNumber
        return true
    }

    /// Whether an FIR's entries hold a new request addressed to `mediaSSRC` (remembering every such entry).
    package mutating func containsNewRequest(in entries: [RTCPFIREntry], for mediaSSRC: UInt32) -> Bool {
        var isNew = false
        for entry in entries where entry.ssrc == mediaSSRC {
            if isNewRequest(entry) { isNew = true }
        }
        return isNew
    }
}
