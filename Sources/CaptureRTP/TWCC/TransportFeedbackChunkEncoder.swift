/// Packs transport-feedback status symbols into 16-bit chunks the way libwebrtc's `TransportFeedback::LastChunk`
/// does, so that our feedback is the size Chromium's would be.
///
/// ## The rule
/// Symbols (0 not received, 1 small delta, 2 large delta) collect in a pending chunk. A symbol is added to it while
/// fewer than 7 are pending, while fewer than 14 are pending and none (this one included) is a large delta, or while
/// every pending symbol is the same as this one and fewer than 8191 are pending. When it cannot be added, the pending
/// chunk is emitted first: as a run length when all its symbols are the same, as a 1-bit vector when it holds 14,
/// otherwise as a 2-bit vector of its first 7 (the rest stay pending). The last chunk is a run length when all the
/// same, a 2-bit vector when it holds at most 7, otherwise a 1-bit vector; unused vector slots are `0`.
///
/// ## Threading
/// A value; no allocation (at most 14 pending symbols are kept, packed in one word).
struct TransportFeedbackChunkEncoder {
    /// The longest run a run-length chunk can say (13 bits).
    static let runLengthCapacity = 0x1FFF
    /// Symbols in a 1-bit status vector chunk.
    static let oneBitCapacity = 14
    /// Symbols in a 2-bit status vector chunk.
    static let twoBitCapacity = 7
    /// The symbol of a received packet with a large (or negative) delta.
    static let largeDelta: UInt8 = 2

    /// The first 14 pending symbols, 2 bits each, symbol i at bits 2i...2i+1.
    private var symbols: UInt32 = 0
    /// Pending symbols (more than 14 only in a run, whose symbols are all ``firstSymbol``).
    private var pendingCount = 0
    private var firstSymbol: UInt8 = 0
    private var allSame = true
    private var hasLargeDelta = false
    /// Chunks already emitted.
    private(set) var emittedChunkCount = 0

    /// The chunks the symbols added so far take once finished: those emitted and the pending one.
    var chunkCount: Int { emittedChunkCount + (pendingCount > 0 ? 1 : 0) }

    /// The chunk count after adding `symbol` (a chunk emitted to make room leaves one more behind).
    func chunkCount(afterAdding symbol: UInt8) -> Int {
        canAdd(symbol) ? emittedChunkCount + 1 : emittedChunkCount + 2
    }

    /// Adds `symbol` (0, 1 or 2); returns the chunk it completed, if adding it emitted one.
    mutating func add(_ symbol: UInt8) -> UInt16? {
        var chunk: UInt16?
        if !canAdd(symbol) { chunk = emit() }
        append(symbol)
        return chunk
    }

    /// The last chunk for what is pending, or `nil` when nothing is.
    func finish() -> UInt16? {
        guard pendingCount > 0 else { return nil }
        if allSame { return runLengthChunk() }
        if pendingCount <= Self.twoBitCapacity { return twoBitChunk(count: pendingCount) }
        return oneBitChunk(count: pendingCount)
    }

    private func canAdd(_ symbol: UInt8) -> Bool {
        if pendingCount < Self.twoBitCapacity { return true }
        if pendingCount < Self.oneBitCapacity && !hasLargeDelta && symbol != Self.largeDelta { return true }
        return pendingCount < Self.runLengthCapacity && allSame && symbol == firstSymbol
    }

    private mutating func append(_ symbol: UInt8) {
        if pendingCount == 0 { firstSymbol = symbol }
        if pendingCount < Self.oneBitCapacity { symbols |= UInt32(symbol & 0x03) << (2 * pendingCount) }
        pendingCount += 1
        allSame = allSame && symbol == firstSymbol
        hasLargeDelta = hasLargeDelta || symbol == Self.largeDelta
    }

    private mutating func emit() -> UInt16 {
        emittedChunkCount += 1
        if allSame {
            defer { clearPending() }
            return runLengthChunk()
        }
        if pendingCount == Self.oneBitCapacity {
            defer { clearPending() }
            return oneBitChunk(count: Self.oneBitCapacity)
        }
        // 7...13 mixed symbols with a large delta among them or coming: a 2-bit vector of the first 7.
        let chunk = twoBitChunk(count: Self.twoBitCapacity)
        let rest = pendingCount - Self.twoBitCapacity
        let remaining = symbols >> (2 * Self.twoBitCapacity)
        clearPending()
        for index in 0..<rest { append(UInt8(truncatingIfNeeded: remaining >> (2 * index)) & 0x03) }
        return chunk
    }

    private mutating func clearPending() {
        symbols = 0
        pendingCount = 0
        allSame = true
        hasLargeDelta = false
    }

    private func symbol(at index: Int) -> UInt16 {
        UInt16(truncatingIfNeeded: symbols >> (2 * index)) & 0x03
    }

    /// `0 SS LLLLLLLLLLLLL`.
    private func runLengthChunk() -> UInt16 {
        UInt16(firstSymbol & 0x03) << 13 | UInt16(pendingCount)
    }

    /// `1 0 SSSSSSSSSSSSSS`, symbol 0 first (a 1-bit vector holds no large delta).
    private func oneBitChunk(count: Int) -> UInt16 {
        var chunk: UInt16 = 0x8000
        for index in 0..<count { chunk |= (symbol(at: index) & 0x01) << (13 - index) }
        return chunk
    }

    /// `1 1 SS SS SS SS SS SS SS`, symbol 0 first.
    private func twoBitChunk(count: Int) -> UInt16 {
        var chunk: UInt16 = 0xC000
        for index in 0..<count { chunk |= symbol(at: index) << (2 * (6 - index)) }
        return chunk
    }
}
