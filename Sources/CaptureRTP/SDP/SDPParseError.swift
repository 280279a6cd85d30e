/// Why an SDP was rejected: the line at fault (1-based, when there is one), its text and the reason.
public struct SDPParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong.
    public enum Reason: Sendable, Hashable {
        /// The line is not `<letter>=<value>`.
        case notATypeValueLine
        /// The first line is not `v=0`.
        case missingOrUnsupportedVersion
        /// A required line (`o=` or `s=`) is absent.
        case missingLine(Character)
        /// A line of this type appears where it may not (e.g. `v=` twice, `o=` in a media section).
        case unexpectedLine(Character)
        /// An `o=` line without its six fields or with non-numeric session id/version.
        case malformedOrigin
        /// A `c=` line without network type, address type and address.
        case malformedConnection
        /// A `b=` line not of the form `<type>:<number>`.
        case malformedBandwidth
        /// A `t=` line without two numbers.
        case malformedTiming
        /// An `m=` line without media, a numeric port, a protocol and at least one format.
        case malformedMedia
        /// An attribute the video facade needs is malformed (its name).
        case malformedAttribute(String)
        /// The description has no `m=video` section.
        case noVideoMedia
        /// The video section offers no VP8 payload type.
        case noVP8PayloadType
        /// There is no connection address for the video section.
        case missingConnection
        /// The `a=crypto` suite is not one this package supports.
        case unsupportedCryptoSuite(String)
    }

    /// The 1-based line number, or `nil` for whole-description problems.
    public var lineNumber: Int?
    /// The offending line's text (empty when `lineNumber` is `nil`).
    public var line: String
    /// What was wrong.
    public var reason: Reason

    /// Creates an error.
    public init(lineNumber: Int?, line: String, reason: Reason) {
        self.lineNumber = lineNumber
        self.line = line
        self.reason = reason
    }

    /// "line N: reason: text".
    public var description: String {
        if let lineNumber { return "SDP line \(lineNumber): \(reason): \(line)" }
        return "SDP: \(reason)"
    }
}
