import Foundation

/// The version of every JSON document the tool prints; bumped when a field changes meaning or goes away.
let jsonSchemaVersion = 1

/// Writes `value` as pretty-printed JSON with sorted keys, followed by a newline, to standard output.
func printJSON(_ value: some Encodable) throws {
    print(String(decoding: try jsonData(value, pretty: true), as: UTF8.self))
}

/// Writes `value` as one line of JSON with sorted keys (a JSON-lines stream: `monitor`, `controls --watch`).
func printJSONLine(_ value: some Encodable) throws {
    print(String(decoding: try jsonData(value, pretty: false), as: UTF8.self))
}

/// `value` as the tool's JSON: sorted keys, slashes unescaped, pretty-printed or on one line.
func jsonData(_ value: some Encodable, pretty: Bool) throws -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting =
        pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
    return try encoder.encode(value)
}

/// Standard error, unbuffered.
enum StandardError {
    /// Writes `text` to standard error.
    static func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// Whether standard error is a terminal.
    static var isTerminal: Bool { isatty(2) != 0 }
}
