/// One direction's state: its configuration, random stream, bottleneck queue, order and loss-model state, counters.
struct SimulatedLink {
    /// What ``send(payloadBytes:at:)`` decided for one datagram.
    struct Decision {
        var outcome: SendOutcome
        /// The instant the datagram was taken to be sent (`now`, moved forward if it went back in time).
        var sentAt: ContinuousClock.Instant
        /// Whether to deliver a second copy at the same instant.
        var duplicate: Bool
    }

    /// A datagram in the bottleneck: it leaves the queue when its transmission ends.
    private struct Transmission {
        var end: ContinuousClock.Instant
        var wireBytes: Int
    }

    private(set) var configuration: LinkConfiguration
    private var timeline: LinkTimeline
    private var random: RandomStream
    private let start: ContinuousClock.Instant
    private var lastSend: ContinuousClock.Instant?
    /// When the bottleneck finishes transmitting everything accepted so far.
    private var busyUntil: ContinuousClock.Instant
    /// Accepted datagrams not yet fully transmitted, in transmission order, from `transmissionsHead` on.
    private var transmissions: [Transmission] = []
    private var transmissionsHead = 0
    private var queuedWireBytes = 0
    /// The latest delivery instant of a datagram not held back by the reordering model.
    private var lastInOrderDelivery: ContinuousClock.Instant?
    private var burstLossInBadState = false
    var statistics = LinkStatistics()

    init(configuration: LinkConfiguration, random: RandomStream, start: ContinuousClock.Instant) {
        self.configuration = configuration.normalized
        self.timeline = LinkTimeline(self.configuration)
        self.random = random
        self.start = start
        self.busyUntil = start
    }

    /// Replaces the configuration for datagrams sent from now on; queue, random stream and counters carry over.
    mutating func reconfigure(_ configuration: LinkConfiguration) {
        self.configuration = configuration.normalized
        timeline = LinkTimeline(self.configuration)
        if self.configuration.burstLoss == nil { burstLossInBadState = false }
    }

    /// Runs one datagram of `payloadBytes` through the link model at `now`.
    mutating func send(payloadBytes: Int, at requested: ContinuousClock.Instant) -> Decision {
        // A send must not go back in time on one direction: the queue and order state assume it does not.
        var now = requested
        if let lastSend, now < lastSend { now = lastSend }
        lastSend = now
        statistics.packetsSent += 1
        statistics.bytesSent += payloadBytes

        let settings = timeline.settings(at: now - start)
        guard settings.isUp else {
            statistics.packetsDroppedWhileDown += 1
            return Decision(outcome: .linkDown, sentAt: now, duplicate: false)
        }
        if drawLoss(lossRate: settings.lossRate) {
            statistics.packetsLost += 1
            return Decision(outcome: .lost, sentAt: now, duplicate: false)
        }

        // The bottleneck: transmission starts when the link is free, at the rate in force then.
        releaseTransmissions(endingAtOrBefore: now)
        let wireBytes = payloadBytes + configuration.overheadBytesPerPacket
        let transmissionStart = max(now, busyUntil)
        var transmissionEnd = transmissionStart
        if let rate = timeline.settings(at: transmissionStart - start).rate {
            transmissionEnd = transmissionStart + .serialization(bytes: wireBytes, bitsPerSecond: rate)
        }
        if transmissionEnd > now {
            guard queuedWireBytes + wireBytes <= configuration.queueBytes else {
                statistics.packetsDroppedAtQueue += 1
                statistics.currentQueueBytes = queuedWireBytes
                return Decision(outcome: .queueFull, sentAt: now, duplicate: false)
            }
            transmissions.append(Transmission(end: transmissionEnd, wireBytes: wireBytes))
            queuedWireBytes += wireBytes
            busyUntil = transmissionEnd
        }
        statistics.currentQueueBytes = queuedWireBytes
        statistics.maximumQueueBytes = max(statistics.maximumQueueBytes, queuedWireBytes)
        let queueingDelay = transmissionEnd - now
        statistics.lastQueueingDelay = queueingDelay
        statistics.maximumQueueingDelay = max(statistics.maximumQueueingDelay, queueingDelay)

        // Propagation, at the delay in force when the datagram leaves the bottleneck.
        var delivery = transmissionEnd + timeline.settings(at: transmissionEnd - start).delay + drawJitter()
        if configuration.preservesOrder, let lastInOrderDelivery, delivery < lastInOrderDelivery {
            delivery = lastInOrderDelivery
        }
        if let lastInOrderDelivery {
            self.lastInOrderDelivery = max(lastInOrderDelivery, delivery)
        } else {
            lastInOrderDelivery = delivery
        }
        if random.chance(configuration.reorderRate) {
            delivery += configuration.reorderDelay
            statistics.packetsReordered += 1
        }
        let duplicate = random.chance(configuration.duplicateRate)
        if duplicate { statistics.packetsDuplicated += 1 }
        return Decision(outcome: .queued(deliveryAt: delivery), sentAt: now, duplicate: duplicate)
    }

    /// Wire bytes not yet fully transmitted at `instant` (at or after the most recent send for an exact figure).
    func queuedBytes(at instant: ContinuousClock.Instant) -> Int {
        var total = 0
        for transmission in transmissions[transmissionsHead...] where transmission.end > instant {
            total += transmission.wireBytes
        }
        return total
    }

    /// Counts a delivery handed out by the network.
    mutating func recordDelivery(payloadBytes: Int) {
        statistics.packetsDelivered += 1
        statistics.bytesDelivered += payloadBytes
    }

    private mutating func releaseTransmissions(endingAtOrBefore now: ContinuousClock.Instant) {
        while transmissionsHead < transmissions.count, transmissions[transmissionsHead].end <= now {
            queuedWireBytes -= transmissions[transmissionsHead].wireBytes
            transmissionsHead += 1
        }
        if transmissionsHead == transmissions.count {
            transmissions.removeAll(keepingCapacity: true)
            transmissionsHead = 0
        } else if transmissionsHead >= 1_024 {
            transmissions.removeFirst(transmissionsHead)
            transmissionsHead = 0
        }
    }

    private mutating func drawLoss(lossRate: Double) -> Bool {
        var lost = random.chance(lossRate)
        if let burstLoss = configuration.burstLoss {
            let lossInState = burstLossInBadState ? burstLoss.lossInBad : burstLoss.lossInGood
            if random.chance(lossInState) { lost = true }
            if burstLossInBadState {
                burstLossInBadState = !random.chance(burstLoss.badToGood)
            } else {
                burstLossInBadState = random.chance(burstLoss.goodToBad)
            }
        }
        return lost
    }

    private mutating func drawJitter() -> Duration {
        let bound = configuration.jitter.saturatedNanoseconds
        guard bound > 0 else { return .zero }
        return .nanoseconds(Int64(random.uniform(through: UInt64(bound))))
    }
}
