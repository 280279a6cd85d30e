internal import CSSL

/// The calling thread's OpenSSL error queue (OpenSSL keeps one per thread).
package enum OpenSSLErrorQueue {
    /// Empties the queue, so that the next failure reports only its own errors.
    package static func clear() { ERR_clear_error() }

    /// Takes every queued error off the queue and renders them with `ERR_error_string_n`, oldest first, joined by
    /// "; " ("no error queued" when empty).
    package static func drain() -> String {
        var messages: [String] = []
        var buffer = [CChar](repeating: 0, count: 256)
        while true {
            let code = ERR_get_error()
            guard code != 0 else { break }
            let text = buffer.withUnsafeMutableBufferPointer { pointer -> String in
                guard let base = pointer.baseAddress else { return "error \(code)" }
                ERR_error_string_n(code, base, pointer.count)
                return String(cString: base)
            }
            // A flood of errors is cut short; the first ones tell the story.
            if messages.count < 16 { messages.append(text) }
        }
        return messages.isEmpty ? "no error queued" : messages.joined(separator: "; ")
    }
}
