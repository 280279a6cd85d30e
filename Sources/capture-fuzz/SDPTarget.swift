import CaptureRTP

extension FuzzTarget {
    /// The SDP reader: the input as text (invalid UTF-8 repaired), parsed as a session description, then read as the
    /// video session a receiver would set up (payload type, codec, ports, rtcp-mux, a=crypto keys, extmap).
    static let sdp = FuzzTarget(name: "sdp") { bytes in
        let text = String(decoding: bytes, as: UTF8.self)
        guard let description = try? SessionDescription(parsing: text) else { return }
        _ = description.render()
        _ = try? VideoSessionParameters(description: description)
    }
}
