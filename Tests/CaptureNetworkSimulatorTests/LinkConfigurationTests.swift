import CaptureNetworkSimulator
import Testing

/// Out-of-range configurations: clamped by the network, rejected by validate().
@Suite struct LinkConfigurationTests {
    @Test func validateRejectsTheFirstBadValue() {
        #expect(throws: Never.self) { try LinkConfiguration(rate: 1_000, schedule: [.linkDown(at: .zero)]).validate() }
        #expect(throws: LinkConfigurationError.nonPositiveRate(field: "rate", value: -5)) {
            try LinkConfiguration(rate: -5).validate()
        }
        #expect(throws: LinkConfigurationError.probabilityOutOfRange(field: "burstLoss.badToGood", value: 2)) {
            try LinkConfiguration(burstLoss: BurstLoss(goodToBad: 0.1, badToGood: 2)).validate()
        }
        #expect(throws: LinkConfigurationError.negativeDuration(field: "schedule[1].delay", value: .seconds(-1))) {
            try LinkConfiguration(schedule: [.linkUp(at: .zero), .setDelay(.seconds(-1), at: .zero)]).validate()
        }
        #expect(throws: LinkConfigurationError.negativeByteCount(field: "queueBytes", value: -1)) {
            try LinkConfiguration(queueBytes: -1).validate()
        }
    }

    @Test func normalizedClampsEveryValue() {
        let bad = LinkConfiguration(
            delay: .milliseconds(-5),
            lossRate: .nan,
            reorderRate: 3,
            duplicateRate: -1,
            rate: 0,
            queueBytes: -10,
            overheadBytesPerPacket: -28,
            schedule: [LinkChange(at: .seconds(-1), rate: -7, lossRate: 1.5)]
        )
        let normalized = bad.normalized
        #expect(normalized.delay == .zero)
        #expect(normalized.lossRate == 0)
        #expect(normalized.reorderRate == 1)
        #expect(normalized.duplicateRate == 0)
        #expect(normalized.rate == 1)
        #expect(normalized.queueBytes == 0)
        #expect(normalized.overheadBytesPerPacket == 0)
        #expect(normalized.schedule == [LinkChange(at: .zero, rate: 1, lossRate: 1)])
        #expect(throws: Never.self) { try normalized.validate() }
    }

    @Test func networkUsesTheClampedConfiguration() {
        let start = ContinuousClock.now
        let network = SimulatedNetwork<String>(seed: 41, start: start)
        network.setLink(from: "A", to: "B", LinkConfiguration(delay: .seconds(-1), lossRate: -0.5, rate: -100))
        #expect(network.link(from: "A", to: "B").rate == 1)
        #expect(network.link(from: "B", to: "A") == LinkConfiguration())
        // Delay clamped to zero, no loss; at 1 bit/s a 29-byte wire datagram takes 232 s, and the next one is dropped
        // only when the queue (64 KiB) is full, so both are accepted.
        #expect(network.send([1], from: "A", to: "B", at: start) == .queued(deliveryAt: start + .seconds(232)))
        #expect(network.send([2], from: "A", to: "B", at: start) == .queued(deliveryAt: start + .seconds(464)))
    }
}
