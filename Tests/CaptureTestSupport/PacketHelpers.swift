import CaptureRTP
import Dispatch

/// Parses `bytes` as one RTCP datagram.
package func parseRTCP(_ bytes: [UInt8]) throws(RTCPParseError) -> [RTCPPacket] {
    let result = bytes.withUnsafeBytes { buffer in
        Result { () throws(RTCPParseError) in try RTCPCompoundPacket.parse(buffer) }
    }
    return try result.get()
}

/// Unprotects `packet` (SRTP, or SRTCP when `rtcp`) with `session`.
package func unprotect(_ packet: [UInt8], _ session: SRTPSession, rtcp: Bool = false) throws(SRTPError) -> [UInt8] {
    var buffer = packet
    var length = packet.count
    let result = buffer.withUnsafeMutableBytes { bytes in
        Result { () throws(SRTPError) in
            if rtcp {
                try session.unprotectRTCP(bytes, length: &length)
            } else {
                try session.unprotectRTP(bytes, length: &length)
            }
        }
    }
    try result.get()
    return Array(buffer[..<length])
}

/// The monotonic clock in nanoseconds, the DTLS endpoint's time base.
package func monotonicNowNs() -> Int64 { Int64(DispatchTime.now().uptimeNanoseconds) }
