/// Why publishing failed. Every failure after the endpoint created a resource ends that resource (DELETE) first, so
/// no half-open session is left behind.
public enum WHIPPublishError: Error, Sendable, CustomStringConvertible {
    /// The endpoint refused or could not be reached, or answered with something that is not a usable answer.
    case whip(WHIPError)
    /// ICE or DTLS did not connect (no working pair, a certificate that does not match its fingerprint, timeout).
    case transport(WebRTCTransportError)
    /// The answer was usable SDP but described something we cannot send (its candidates, fingerprint or setup).
    case unusableAnswer(String)
    /// The send pipeline could not be built (encoder settings, bit-rate range).
    case pipeline(String)
    /// ``WHIPPublisher/start()`` was called twice, or after ``WHIPPublisher/stop()``.
    case invalidState(String)

    /// What happened, for people.
    public var description: String {
        switch self {
        case .whip(let error): "WHIP: \(error)"
        case .transport(let error): "WebRTC transport: \(error)"
        case .unusableAnswer(let reason): "unusable answer: \(reason)"
        case .pipeline(let reason): "send pipeline: \(reason)"
        case .invalidState(let reason): "invalid state: \(reason)"
        }
    }
}
