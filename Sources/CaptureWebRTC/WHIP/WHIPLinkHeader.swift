/// One link of an HTTP `Link` header (RFC 8288): `<target>; rel="…"; name="value"; …`.
///
/// A header value may hold several links separated by commas, and a response may carry several `Link` headers;
/// ``parse(_:)`` splits on commas outside `<…>` and quoted strings, so both shapes (and headers an HTTP stack joined
/// with `", "`) read the same.
public struct WHIPLinkHeader: Sendable, Hashable, Codable {
    /// The URI between the angle brackets.
    public var target: String
    /// The parameters, names lower-cased, values unquoted (the first occurrence of a name wins).
    public var parameters: [String: String]

    /// Creates a link.
    public init(target: String, parameters: [String: String] = [:]) {
        self.target = target
        self.parameters = parameters
    }

    /// The `rel` parameter's relation types (space-separated in the header).
    public var relations: [String] {
        (parameters["rel"] ?? "").split(separator: " ").map { $0.lowercased() }
    }

    /// The links of one or more `Link` header values; malformed links (no `<…>`) are skipped.
    public static func parse(_ values: [String]) -> [WHIPLinkHeader] {
        values.flatMap { split($0) }.compactMap(parseLink)
    }

    /// The links of one `Link` header value.
    public static func parse(_ value: String) -> [WHIPLinkHeader] { parse([value]) }

    /// Splits `text` on `separator` outside `<…>` and double-quoted strings (with backslash escapes).
    private static func split(_ text: String, on separator: Character = ",") -> [String] {
        var pieces: [String] = []
        var current = ""
        var inQuotes = false
        var inBrackets = false
        var escaped = false
        for character in text {
            if escaped {
                escaped = false
            } else if inQuotes, character == "\\" {
                escaped = true
            } else if character == "\"", !inBrackets {
                inQuotes.toggle()
            } else if !inQuotes, character == "<" {
                inBrackets = true
            } else if !inQuotes, character == ">" {
                inBrackets = false
            } else if !inQuotes, !inBrackets, character == separator {
                pieces.append(current)
                current = ""
                continue
            }
            current.append(character)
        }
        pieces.append(current)
        return pieces
    }

    private static func parseLink(_ text: String) -> WHIPLinkHeader? {
        let parts = split(text, on: ";").map(trimmed)
        guard let first = parts.first, first.hasPrefix("<"), first.hasSuffix(">"), first.count >= 2 else { return nil }
        var parameters: [String: String] = [:]
        for part in parts.dropFirst() where !part.isEmpty {
            let pair = part.split(separator: "=", maxSplits: 1).map { trimmed(String($0)) }
            let name = pair[0].lowercased()
            guard parameters[name] == nil else { continue }
            parameters[name] = pair.count == 2 ? unquote(pair[1]) : ""
        }
        return WHIPLinkHeader(target: String(first.dropFirst().dropLast()), parameters: parameters)
    }

    private static func trimmed(_ text: String) -> String {
        String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }

    private static func unquote(_ text: String) -> String {
        guard text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") else { return text }
        var result = ""
        var escaped = false
        for character in text.dropFirst().dropLast() {
            if !escaped, character == "\\" {
                escaped = true
                continue
            }
            escaped = false
            result.append(character)
        }
        return result
    }
}
