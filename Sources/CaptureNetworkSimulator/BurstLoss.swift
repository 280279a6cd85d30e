/// Correlated loss: the Gilbert–Elliott two-state model.
///
/// Each direction with burst loss is in a good or a bad state. For each datagram sent while the link is up, the
/// datagram is lost with ``lossInGood`` or ``lossInBad`` according to the current state, then the state moves on:
/// good to bad with ``goodToBad``, bad to good with ``badToGood``. A burst therefore lasts `1 / badToGood`
/// datagrams on average, and the long-run share of datagrams in the bad state is
/// `goodToBad / (goodToBad + badToGood)`. Every direction starts in the good state.
///
/// The model adds to ``LinkConfiguration/lossRate``: a datagram is lost if either loses it. Out-of-range
/// probabilities are clamped (see ``LinkConfiguration/normalized``).
public struct BurstLoss: Sendable, Hashable {
    /// Probability of moving from the good to the bad state after a datagram.
    public var goodToBad: Double
    /// Probability of moving from the bad to the good state after a datagram.
    public var badToGood: Double
    /// Loss probability in the bad state. Default 1 (the simple Gilbert model).
    public var lossInBad: Double
    /// Loss probability in the good state. Default 0.
    public var lossInGood: Double

    /// A Gilbert–Elliott model; the defaults for the loss probabilities give Gilbert's original model.
    public init(goodToBad: Double, badToGood: Double, lossInBad: Double = 1, lossInGood: Double = 0) {
        self.goodToBad = goodToBad
        self.badToGood = badToGood
        self.lossInBad = lossInBad
        self.lossInGood = lossInGood
    }

    /// This model with every probability clamped to `0...1` (NaN to 0).
    public var normalized: BurstLoss {
        BurstLoss(
            goodToBad: goodToBad.clampedProbability,
            badToGood: badToGood.clampedProbability,
            lossInBad: lossInBad.clampedProbability,
            lossInGood: lossInGood.clampedProbability
        )
    }
}
