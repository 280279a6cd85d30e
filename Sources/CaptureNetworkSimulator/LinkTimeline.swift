/// The settings a ``LinkChange`` schedule can change, as they stand at one instant.
struct LinkSettings: Hashable {
    var rate: Int?
    var isUp: Bool
    var lossRate: Double
    var delay: Duration
}

/// A direction's schedule resolved into the settings in force from each change on.
struct LinkTimeline {
    private let initial: LinkSettings
    /// Sorted by offset; each entry holds the settings from its offset until the next entry's.
    private let points: [(offset: Duration, settings: LinkSettings)]

    /// The timeline of a normalized configuration.
    init(_ configuration: LinkConfiguration) {
        initial = LinkSettings(
            rate: configuration.rate,
            isUp: true,
            lossRate: configuration.lossRate,
            delay: configuration.delay
        )
        // Sort by offset, keeping array order for changes at the same offset (the index breaks ties).
        let changes = configuration.schedule.enumerated().sorted {
            ($0.element.at, $0.offset) < ($1.element.at, $1.offset)
        }
        var settings = initial
        var points: [(offset: Duration, settings: LinkSettings)] = []
        points.reserveCapacity(changes.count)
        for (_, change) in changes {
            if let rate = change.rate { settings.rate = rate }
            if let isUp = change.isUp { settings.isUp = isUp }
            if let lossRate = change.lossRate { settings.lossRate = lossRate }
            if let delay = change.delay { settings.delay = delay }
            if let last = points.last, last.offset == change.at {
                points[points.count - 1].settings = settings
            } else {
                points.append((change.at, settings))
            }
        }
        self.points = points
    }

    /// The settings in force at `offset` from the network's start (a change at exactly `offset` included).
    func settings(at offset: Duration) -> LinkSettings {
        // Binary search for the number of points at or before `offset`.
        var low = 0
        var high = points.count
        while low < high {
            let middle = (low + high) / 2
            if points[middle].offset <= offset {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low == 0 ? initial : points[low - 1].settings
    }
}
