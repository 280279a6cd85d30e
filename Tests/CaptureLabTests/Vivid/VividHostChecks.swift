import CaptureCore
import CaptureTestSupport
import Foundation
import Testing

/// Enables a test only when the vivid guest left every one of `names`; otherwise skips it with `reason` and a
/// printed note naming `test`.
private func needsArtifacts(_ names: [String], for test: String, _ reason: Comment) -> ConditionTrait {
    .enabled(reason) { VividArtifacts.available(names, for: test) }
}

/// Host-side checks on what the vivid guest left in `.build/vivid-out` (run `Scripts/test-vivid` first).
///
/// Host only: `Scripts/vivid-guest.sh` skips this suite by its type name (the guest filter matches file names too).
@Suite("Guest artifacts", .tags(.lab), .selectedByTags)
struct GuestArtifactChecks {
    private static let width = 640
    private static let height = 480

    @Test(
        "The v4l2-ctl reference artifacts are well formed",
        needsArtifacts(
            [VividArtifacts.referenceYUYV, VividArtifacts.referenceFormats], for: "reference artifacts",
            "run Scripts/test-vivid first")
    )
    func referenceArtifacts() throws {
        let frame = try VividArtifacts.read(VividArtifacts.referenceYUYV)
        #expect(frame.count == Self.width * Self.height * 2)
        let formats = String(decoding: try VividArtifacts.read(VividArtifacts.referenceFormats), as: UTF8.self)
        #expect(formats.contains("'YUYV'"))
        #expect(formats.contains("Size: Discrete 640x480"))
    }

    @Test(
        "Our NV12 frame matches v4l2-ctl's YUYV frame converted by ffmpeg (PSNR >= 40 dB)",
        .enabled("needs ffmpeg") { VividFFmpeg.available(for: "PSNR against ffmpeg") },
        needsArtifacts(
            [VividArtifacts.oursNV12, VividArtifacts.referenceYUYV], for: "PSNR against ffmpeg",
            "run Scripts/test-vivid with the vivid guest suites first")
    )
    func oursMatchesFFmpegReference() async throws {
        let ours = try VividArtifacts.read(VividArtifacts.oursNV12)
        let reference = try await VividFFmpeg.convertRaw(
            VividArtifacts.url(VividArtifacts.referenceYUYV),
            from: "yuyv422", width: Self.width, height: Self.height, to: "nv12")
        // NV12 packed: the luma plane, then the interleaved chroma plane.
        let lumaCount = Self.width * Self.height
        try #require(ours.count == lumaCount + 2 * ((Self.width + 1) / 2) * ((Self.height + 1) / 2))
        let psnr = try #require(FrameQuality.psnr(packed: ours, reference, lumaCount: lumaCount))
        print(
            "Guest artifacts: PSNR ours vs ffmpeg(v4l2-ctl): Y \(psnr.luma) dB, UV \(psnr.chroma) dB, all \(psnr.combined) dB"
        )
        #expect(psnr.luma >= 40)
        #expect(psnr.chroma >= 40)
        #expect(psnr.combined >= 40)
    }

    @Test(
        "capturer-probe formats prints exactly what v4l2-ctl --list-formats-ext prints",
        needsArtifacts(
            [VividArtifacts.probeFormats, VividArtifacts.referenceFormats], for: "probe formats",
            "needs capturer-probe in the guest")
    )
    func probeFormatsMatchV4L2Ctl() throws {
        let probe = try VividArtifacts.read(VividArtifacts.probeFormats)
        let reference = try VividArtifacts.read(VividArtifacts.referenceFormats)
        let identical = probe == reference
        var difference = ""
        if !identical {
            let ours = String(decoding: probe, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            let theirs = String(decoding: reference, as: UTF8.self).split(
                separator: "\n", omittingEmptySubsequences: false)
            let line =
                zip(ours, theirs).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                ?? min(ours.count, theirs.count)
            let got = line < ours.count ? String(ours[line]) : "<end of file>"
            let want = line < theirs.count ? String(theirs[line]) : "<end of file>"
            difference = "first difference at line \(line + 1): probe \"\(got)\", v4l2-ctl \"\(want)\""
        }
        #expect(identical, "probe-formats.txt differs from v4l2ctl-formats.txt: \(difference)")
    }
}
