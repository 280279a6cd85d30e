/// What steers a sending connection's target bit rate.
///
/// ## Choosing
/// ``transportWide`` is GoogCC's send-side estimate (CaptureCongestion) from transport-wide feedback, as Chromium's
/// sender does: it reacts to the queue building before packets are lost. Without a pacer yet (frames leave in
/// bursts, probes are not sent), it still runs the link fuller than the receiver-report rules: on a 500 kbit/s `tbf`
/// link into Janus its wire rate settled at about 518 kbit/s where the receiver-report rules stay under 500, so it is
/// not the default until the pacer lands. ``receiverReports`` is the stream's loss-based estimate from RTCP receiver
/// reports (RFC 3550), under the receiver's REMB or TMMBR ceiling.
///
/// When transport-wide feedback was not negotiated, ``transportWide`` falls back to ``receiverReports``.
public enum CongestionControlMode: String, Sendable, Hashable, Codable, CaseIterable {
    /// Loss from receiver reports moves the rate; REMB and TMMBR cap it.
    case receiverReports = "receiver-reports"
    /// The send-side estimate from transport-wide feedback (delay, loss and acknowledged rate); REMB and TMMBR cap it.
    case transportWide = "transport-wide"
}
