import Foundation
import Testing

/// What a suite is and what it needs from the machine. The kinds are also targets (unit suites in
/// `Tests/<Module>Tests`, ``interop`` in CaptureInteropTests, ``lab`` in CaptureLabTests); the needs say why a suite
/// cannot run anywhere. `Scripts/test` decides what runs where by these tags (see ``TagSelection``), not by suite names.
extension Tag {
    // Kinds.

    /// Runs a local tool or server against our code: ffmpeg, GStreamer, vpxdec and vpxenc, OpenSSL's `s_client` and
    /// `s_server`, coturn, curl, Node.js, `Scripts/whip-test-server.py`, or the built `capturer-probe`.
    @Tag package static var interop: Tag
    /// The lab: Janus and headless Chromium in network namespaces, the preview in Chromium, the vivid QEMU guest. It
    /// judges frame rates in real peers, so it runs on its own and not under the sanitizers.
    @Tag package static var lab: Tag

    // Needs.

    /// Judges rates or intervals against the wall clock (frame pacing, a bit rate sampled every 100 ms): CPU-heavy
    /// tests beside it on 2 cores disturb it, and instrumented code cannot keep it.
    @Tag package static var wallClock: Tag
    /// Runs only inside the vivid QEMU guest (`CAPTURE_VIVID_GUEST=1`, set by `Scripts/vivid-guest.sh`); skips itself
    /// elsewhere.
    @Tag package static var vividGuest: Tag
    /// Needs root: network namespaces (the Janus lab), or `mknod`.
    @Tag package static var root: Tag
}

/// Leaves out the tests whose tags a run names, each reported skipped with the reason, never silently passed.
///
/// `CAPTURE_SKIP_TAGS` is a comma-separated list of tag names (`lab,wallClock`); a test carrying any of them is
/// skipped (`➜ Test x() skipped: "SKIPPED by tag lab (…): why"`), saying which tag left it out and why
/// (`CAPTURE_SKIP_WHY`, else a generic reason). Put the trait next to the `.tags(…)` of a suite (it applies to every
/// test in it) or a test: `@Suite(.tags(.lab), .selectedByTags)`; `Scripts/test` checks that every tagged file has it.
///
/// The skip is the one `.disabled(_:)` makes, applied by tag: `swift test` has no filter by tag (its `--filter` and
/// `--skip` match test names). The other way round, a step that runs only some tags or a target selects them by
/// name: `Scripts/tagged wallClock` prints the names of what carries the tag, read from the built bundle's listing.
package struct TagSelection: SuiteTrait, TestTrait {
    package var isRecursive: Bool { true }

    /// The tag names `CAPTURE_SKIP_TAGS` lists.
    package static let skippedTags: Set<String> = Set(
        (ProcessInfo.processInfo.environment["CAPTURE_SKIP_TAGS"] ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "."))
        }.filter { !$0.isEmpty })

    /// Why a test with `tags` is left out in this run, or `nil` when it runs.
    package static func reasonToSkip(_ tags: Set<Tag>) -> String? {
        let names = tags.map { String(describing: $0).trimmingCharacters(in: CharacterSet(charactersIn: ".")) }
        guard let tag = names.sorted().first(where: skippedTags.contains) else { return nil }
        let why = ProcessInfo.processInfo.environment["CAPTURE_SKIP_WHY"] ?? "this run leaves it out"
        return "SKIPPED by tag \(tag) (CAPTURE_SKIP_TAGS=\(skippedTags.sorted().joined(separator: ","))): \(why)"
    }

    package func prepare(for test: Test) async throws {
        guard !test.isSuite, let reason = Self.reasonToSkip(test.tags) else { return }
        try await ConditionTrait.disabled(Comment(rawValue: reason)).prepare(for: test)
    }
}

extension Trait where Self == TagSelection {
    /// Lets `CAPTURE_SKIP_TAGS` leave out this suite's tests by their tags (see ``TagSelection``).
    package static var selectedByTags: Self { TagSelection() }
}
