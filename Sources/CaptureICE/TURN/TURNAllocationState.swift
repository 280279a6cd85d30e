/// Where a `TURNAllocation` is in its life.
public enum TURNAllocationState: String, Sendable, Hashable, Codable {
    /// Not started.
    case new
    /// Allocate sent (possibly again with credentials), no success yet.
    case allocating
    /// The server granted a relayed address; refreshed before it expires.
    case allocated
    /// The allocation failed or was lost (see `TURNAllocation/lastError`).
    case failed
    /// Released (Refresh with LIFETIME 0 sent).
    case closed
}
