import CaptureCongestion
import Testing

@Suite("RetransmissionRateLimiter: retransmissions within the target rate")
struct RetransmissionRateLimiterTests {
    @Test("a second's worth at once, then the rate; a lower target trims what is left; hostile inputs don't trap")
    func bucket() {
        let start = ContinuousClock.Instant.now
        var limiter = RetransmissionRateLimiter(maximumBitrate: 96_000, at: start)  // 12,000 bytes a second
        var sent = 0
        while limiter.tryUse(1_200, at: start) { sent += 1 }
        #expect(sent == 10 && limiter.refused == 1)
        // 100 ms refills 1,200 bytes: one more packet.
        let refilled = limiter.tryUse(1_200, at: start + .milliseconds(100))
        let again = limiter.tryUse(1_200, at: start + .milliseconds(100))
        #expect(refilled && !again)
        // Over 10 s at most the rate gets through (plus the first second's burst).
        var bytes = 0
        for step in 1...1_000 where limiter.tryUse(1_200, at: start + .milliseconds(100 + 10 * step)) { bytes += 1_200 }
        #expect(bytes <= 12_000 * 10 + 1_200 && bytes >= 12_000 * 9)
        limiter.setMaximumBitrate(8_000, at: start + .seconds(11))
        #expect(limiter.available <= 1_000)
        limiter.setMaximumBitrate(-5, at: start - .seconds(100))
        let atZero = limiter.tryUse(1, at: start + .seconds(1_000_000))
        limiter.setMaximumBitrate(.max, at: start + .seconds(2_000_000))
        let negative = limiter.tryUse(-3, at: start + .seconds(3_000_000))
        #expect(!atZero && negative)
    }
}
