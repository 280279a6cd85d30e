/// One input the package parses, exercised by libFuzzer (see `Scripts/fuzz`).
///
/// To add a target: write a file with an `extension FuzzTarget` that defines a `static let`, list it in ``all``, and
/// add seeds: a folder `Fixtures/fuzz/<name>/`, or fixtures that exist already (`seed_dirs` in `Scripts/fuzz`). A
/// target's `run` must accept any bytes: bad input is a typed error it ignores; only a crash, a sanitizer report or a
/// broken invariant (`preconditionFailure`) is a finding.
struct FuzzTarget: Sendable {
    /// The name `Scripts/fuzz` and `CAPTURE_FUZZ_TARGET` use, and the seed folder's name.
    let name: String
    /// Feeds one input to the code under test.
    let run: @Sendable (UnsafeRawBufferPointer) -> Void

    /// Every target, in the order `Scripts/fuzz` runs them.
    static let all: [FuzzTarget] = [.formatList, .y4m, .ivf, .frameConverter, .rtp, .rtcp, .twcc, .sdp, .controlList]

    /// The target called `name`.
    static func named(_ name: String) -> FuzzTarget? {
        all.first { $0.name == name }
    }
}
