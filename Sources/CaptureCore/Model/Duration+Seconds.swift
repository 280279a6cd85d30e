extension Duration {
    /// The span in seconds, as the W3C webrtc-stats and JSON outputs give times.
    package var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The span in milliseconds.
    package var inMilliseconds: Double { inSeconds * 1_000 }
}
