import Foundation

/// The version of every JSON document the tool prints; bumped when a field changes meaning or goes away.
let jsonSchemaVersion = 1

/// Writes `value` as pretty-printed JSON with sorted keys, followed by a newline, to standard output.
func printJSON(_ value: some Encodable) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    let data = try encoder.encode(value)
    print(String(decoding: data, as: UTF8.self))
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
