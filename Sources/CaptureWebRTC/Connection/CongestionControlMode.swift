/// What steers a sending connection's target bit rate.
///
/// ## Choosing
/// ``transportWide`` (the default) is GoogCC's send-side estimate (CaptureCongestion) from transport-wide feedback,
/// paced, with a congestion window, as Chromium's sender does: it reacts to the queue building before packets are
/// lost. Through a shaped link into Janus (2 Mbit/s stepping to 500 kbit/s and back, RTT 50 ms, a 300 ms queue) it
/// came under the link 1.1 s after the step where Chromium took 2.8 s, and recovered within 14 s (Chromium 15 s).
/// ``receiverReports`` is the stream's loss-based estimate from RTCP receiver reports (RFC 3550), under the
/// receiver's REMB or TMMBR ceiling: for an endpoint without transport-wide feedback, or to compare.
///
/// When transport-wide feedback was not negotiated, ``transportWide`` falls back to ``receiverReports``.
public enum CongestionControlMode: String, Sendable, Hashable, Codable, CaseIterable {
    /// Loss from receiver reports moves the rate; REMB and TMMBR cap it.
    case receiverReports = "receiver-reports"
    /// The send-side estimate from transport-wide feedback (delay, loss and acknowledged rate); REMB and TMMBR cap it.
    case transportWide = "transport-wide"
}
