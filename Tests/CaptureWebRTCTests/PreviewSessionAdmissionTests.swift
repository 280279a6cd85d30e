import CaptureNet
import CapturePreview
import CaptureVP8
import Testing

/// `PreviewSession.answer(offer:remote:)` against its limits, with Chromium's offer shape and no browser behind it:
/// the viewers never connect, and the session's stop closes them.
@Suite("PreviewSession: the viewer limit holds for offers at once; an offer after stop gets no viewer")
struct PreviewSessionAdmissionTests {
    static func session(maxViewers: Int) throws -> PreviewSession {
        try PreviewSession(
            encoder: VP8EncoderConfiguration(targetBitrateKbps: 500, framerate: 30),
            hostAddresses: [.loopbackIPv4(port: 0)], maxViewers: maxViewers)
    }

    static let offer = ViewerOfferTests.offer(ViewerOfferTests.chromium)

    @Test("eight offers at once against a limit of two: two viewers, six 503s")
    func limitHoldsForConcurrentOffers() async throws {
        let session = try Self.session(maxViewers: 2)
        let outcomes = await withTaskGroup(of: Int.self) { group -> [Int] in
            for _ in 0..<8 {
                group.addTask {
                    do {
                        _ = try await session.answer(offer: Self.offer, remote: "127.0.0.1")
                        return 201
                    } catch {
                        return (error as? WHEPRequestError)?.status ?? 0
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 == 201 }.count == 2, "\(outcomes)")
        #expect(outcomes.filter { $0 == 503 }.count == 6, "\(outcomes)")
        #expect(session.viewerCounts.watching == 2)
        await session.stop()
        #expect(session.viewerCounts.watching == 0)
    }

    @Test("after stop, an offer is refused with 503 and no viewer is made")
    func offerAfterStop() async throws {
        let session = try Self.session(maxViewers: 4)
        await session.stop()
        await #expect(throws: WHEPRequestError.serviceUnavailable("the preview has stopped")) {
            _ = try await session.answer(offer: Self.offer, remote: "127.0.0.1")
        }
        #expect(session.viewerCounts.started == 0 && session.viewerCounts.watching == 0)
    }
}
