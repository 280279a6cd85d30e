extension SessionDescription {
    /// Parses SDP text (CRLF or LF line ends; blank lines ignored).
    ///
    /// Strict about structure: the first line must be `v=0`, `o=` and `s=` must be present, and `o=`, `c=`, `b=`,
    /// `t=` and `m=` lines must have their fields. Unmodelled line types are kept; the error names the line at fault.
    public init(parsing text: String) throws(SDPParseError) {
        var origin: Origin?
        var sessionName: String?
        var description = SessionDescription(
            origin: Origin(sessionID: 0, addressType: "IP4", address: ""), sessionName: "", timing: [])
        var sawVersion = false
        var lineNumber = 0
        // "\r\n" is one Character in Swift, so split on both it and a bare "\n".
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            lineNumber += 1
            let line = rawLine.hasSuffix("\r") ? String(rawLine.dropLast()) : String(rawLine)
            if line.isEmpty { continue }
            func fail(_ reason: SDPParseError.Reason) -> SDPParseError {
                SDPParseError(lineNumber: lineNumber, line: line, reason: reason)
            }
            let characters = Array(line)
            guard characters.count >= 2, characters[1] == "=", characters[0].isASCII, characters[0].isLetter else {
                throw fail(.notATypeValueLine)
            }
            let type = characters[0]
            let value = String(line.dropFirst(2))
            if !sawVersion {
                guard type == "v", value == "0" else { throw fail(.missingOrUnsupportedVersion) }
                sawVersion = true
                continue
            }
            let inMedia = !description.media.isEmpty
            switch type {
            case "v":
                throw fail(.unexpectedLine(type))
            case "o":
                guard !inMedia, origin == nil else { throw fail(.unexpectedLine(type)) }
                let fields = value.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
                guard fields.count == 6, let id = UInt64(fields[1]), let version = UInt64(fields[2]) else {
                    throw fail(.malformedOrigin)
                }
                origin = Origin(
                    username: fields[0], sessionID: id, sessionVersion: version, networkType: fields[3],
                    addressType: fields[4], address: fields[5])
            case "s":
                guard !inMedia, sessionName == nil else { throw fail(.unexpectedLine(type)) }
                sessionName = value
            case "i":
                if inMedia {
                    description.media[description.media.count - 1].information = value
                } else {
                    description.information = value
                }
            case "c":
                let fields = value.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
                guard fields.count == 3 else { throw fail(.malformedConnection) }
                let connection = Connection(networkType: fields[0], addressType: fields[1], address: fields[2])
                if inMedia {
                    description.media[description.media.count - 1].connection = connection
                } else {
                    description.connection = connection
                }
            case "b":
                let parts = value.split(separator: ":", maxSplits: 1).map(String.init)
                guard parts.count == 2, !parts[0].isEmpty, let number = UInt64(parts[1]) else {
                    throw fail(.malformedBandwidth)
                }
                let bandwidth = Bandwidth(type: parts[0], value: number)
                if inMedia {
                    description.media[description.media.count - 1].bandwidths.append(bandwidth)
                } else {
                    description.bandwidths.append(bandwidth)
                }
            case "t":
                guard !inMedia else { throw fail(.unexpectedLine(type)) }
                let fields = value.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count == 2, let start = UInt64(fields[0]), let stop = UInt64(fields[1]) else {
                    throw fail(.malformedTiming)
                }
                description.timing.append(Timing(start: start, stop: stop))
            case "a":
                let parts = value.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
                guard let name = parts.first, !name.isEmpty else { throw fail(.malformedAttribute(value)) }
                let attribute = Attribute(String(name), parts.count > 1 ? String(parts[1]) : nil)
                if inMedia {
                    description.media[description.media.count - 1].attributes.append(attribute)
                } else {
                    description.attributes.append(attribute)
                }
            case "m":
                description.media.append(try Self.parseMedia(value, fail: fail))
            default:
                let other = OtherLine(type: String(type), value: value)
                if inMedia {
                    description.media[description.media.count - 1].otherLines.append(other)
                } else {
                    description.otherLines.append(other)
                }
            }
        }
        guard sawVersion else {
            throw SDPParseError(lineNumber: nil, line: "", reason: .missingOrUnsupportedVersion)
        }
        guard let origin else { throw SDPParseError(lineNumber: nil, line: "", reason: .missingLine("o")) }
        guard let sessionName else { throw SDPParseError(lineNumber: nil, line: "", reason: .missingLine("s")) }
        description.origin = origin
        description.sessionName = sessionName
        self = description
    }

    private static func parseMedia(
        _ value: String, fail: (SDPParseError.Reason) -> SDPParseError
    ) throws(SDPParseError) -> Media {
        let fields = value.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard fields.count >= 4, !fields[0].isEmpty else { throw fail(.malformedMedia) }
        let portParts = fields[1].split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let port = UInt16(portParts[0]) else { throw fail(.malformedMedia) }
        var portCount: UInt16?
        if portParts.count == 2 {
            guard let count = UInt16(portParts[1]) else { throw fail(.malformedMedia) }
            portCount = count
        }
        return Media(media: fields[0], port: port, portCount: portCount, proto: fields[2], formats: Array(fields[3...]))
    }
}
