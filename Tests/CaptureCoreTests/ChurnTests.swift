import CaptureCore
import CaptureTestSupport
import Foundation
import Testing

/// Checks that the process's descriptors, mappings and threads come back to `baseline`. The counts are the whole
/// process's, which any other test running beside would move: each churn test runs in a process of its own (an exit
/// test), where it is the only test.
func expectResourcesSettled(to baseline: ProcessResources, _ what: String) async {
    let after = await ProcessResources.settle(to: baseline)
    #expect(
        after.isWithin(baseline),
        "\(what): resources went from \(baseline) to \(after); threads now: \(ProcessResources.threadNames())")
}

/// Counts what a delegate sees, holding no frame.
final class CountingDelegate: CameraVideoCapturerDelegate {
    let counts = Locked((frames: 0, stops: 0, rotations: Set<VideoRotation>()))
    func capturer(_ capturer: CameraVideoCapturer, didCapture frame: VideoFrame) {
        counts.withLock { counts in
            counts.frames += 1
            counts.rotations.insert(frame.rotation)
        }
    }
    func capturer(_ capturer: CameraVideoCapturer, didStopWith error: CaptureError?) {
        counts.withLock { $0.stops += 1 }
    }
}

/// Start/stop churn and concurrent use of one capturer on the synthetic camera, unpaced so it stays short.
///
/// Each case runs its workload twice: once to warm up, then measured. glibc keeps thread stacks and malloc arenas
/// once created and the cooperative pool grows on demand, so a first round may add mappings and threads that stay for
/// the process's life; after the second round the process must hold no more descriptors, mappings or threads than
/// after the first. A leak per cycle would show as growth.
@Suite("Churn: start/stop cycles and concurrent use", .serialized)
struct ChurnTests {
    static let target = Dimensions(width: 320, height: 240)

    /// Runs `round` twice and checks that the second round left the process as the first did.
    static func expectNoGrowth(_ what: String, _ round: () async throws -> Void) async throws {
        // Before the warm-up: the executor's new threads take the stacks glibc keeps, and the warm-up puts them back.
        await fillBlockingExecutor()
        try await round()
        try await Task.sleep(for: .milliseconds(200))
        let baseline = ProcessResources.now()
        try await round()
        await expectResourcesSettled(to: baseline, what)
    }

    /// Makes the blocking executor's every thread exist, so that the baseline counts them: it makes them on demand (up
    /// to `maximumThreads`) and keeps them, and a measured round that happens to overlap more blocking calls than the
    /// warm-up did would otherwise add one (dry run 11, ASan: threads 6 → 7 after 500 cycles).
    static func fillBlockingExecutor() async {
        let executor = BlockingExecutor.shared
        _ = await occupy(executor, closures: executor.maximumThreads, openingAt: executor.maximumThreads)
    }

    static func unpacedCapturer(delegate: (any CameraVideoCapturerDelegate)?) -> CameraVideoCapturer {
        let capturer = CameraVideoCapturer(delegate: delegate)
        capturer.isPaced = false
        return capturer
    }

    @Test("500 start/stop cycles leave the capturer idle and the process as it was")
    func startStopCycles() async {
        await #expect(processExitsWith: .success) { try await ChurnTests.startStopCyclesInThisProcess() }
    }

    @Test("a stop racing each start: every start either succeeds or throws invalidState, and the capturer ends idle")
    func stopDuringStart() async {
        await #expect(processExitsWith: .success) { try await ChurnTests.stopDuringStartInThisProcess() }
    }

    @Test("concurrent stops from eight tasks: all return, the delegate hears one stop, the capturer is idle")
    func concurrentStops() async {
        await #expect(processExitsWith: .success) { try await ChurnTests.concurrentStopsInThisProcess() }
    }

    @Test("the delegate released mid-stream: capture goes on without it and stops cleanly")
    func delegateReleased() async {
        await #expect(processExitsWith: .success) { try await ChurnTests.delegateReleasedInThisProcess() }
    }

    @Test("deviceOrientation set from four threads while frames flow: every frame carries a valid rotation")
    func orientationFromThreads() async {
        await #expect(processExitsWith: .success) { try await ChurnTests.orientationFromThreadsInThisProcess() }
    }

    @Test("a consumer slower than the camera: drops are counted, the frames come from a bounded set of buffers")
    func slowConsumer() async {
        await #expect(processExitsWith: .success) { try await ChurnTests.slowConsumerInThisProcess() }
    }

    // The bodies, each run by its test in a process of its own.

    static func startStopCyclesInThisProcess() async throws {
        let delegate = CountingDelegate()
        let capturer = Self.unpacedCapturer(delegate: delegate)
        try await Self.expectNoGrowth("500 cycles") {
            for cycle in 0..<250 {
                try await capturer.startCapture(target: Self.target)
                #expect(capturer.captureState == .running, "cycle \(cycle)")
                await capturer.stopCapture()
                #expect(capturer.captureState == .idle, "cycle \(cycle)")
            }
        }
        #expect(delegate.counts.withLock { $0.stops } == 500)
    }

    static func stopDuringStartInThisProcess() async throws {
        let capturer = Self.unpacedCapturer(delegate: CountingDelegate())
        var succeeded = 0
        try await Self.expectNoGrowth("stop during start") {
            for cycle in 0..<100 {
                let start = Task { () async throws -> CaptureConfiguration in
                    try await capturer.startCapture(target: Self.target)
                }
                // Vary where the stop lands: before the start has begun, while it is starting, or after.
                for _ in 0..<(cycle % 4) { await Task.yield() }
                await capturer.stopCapture()
                switch await start.result {
                case .success: succeeded += 1
                case .failure(let error): #expect((error as? CaptureError)?.code == .invalidState, "\(error)")
                }
                await capturer.stopCapture()
                #expect(capturer.captureState == .idle)
            }
        }
        print("ChurnTests: \(succeeded) of 200 starts completed before their racing stop")
    }

    static func concurrentStopsInThisProcess() async throws {
        let delegate = CountingDelegate()
        let capturer = Self.unpacedCapturer(delegate: delegate)
        try await Self.expectNoGrowth("concurrent stops") {
            for _ in 0..<50 {
                let stopsBefore = delegate.counts.withLock { $0.stops }
                try await capturer.startCapture(target: Self.target)
                await withTaskGroup(of: Void.self) { group in
                    for _ in 0..<8 { group.addTask { await capturer.stopCapture() } }
                }
                #expect(capturer.captureState == .idle)
                #expect(delegate.counts.withLock { $0.stops } == stopsBefore + 1)
            }
        }
    }

    static func delegateReleasedInThisProcess() async throws {
        let capturer = Self.unpacedCapturer(delegate: nil)
        try await Self.expectNoGrowth("delegate released") {
            var delegate: CountingDelegate? = CountingDelegate()
            capturer.delegate = delegate
            let stream = capturer.frames(bufferingNewest: 1)
            try await capturer.startCapture(target: Self.target)
            var seen = 0
            for await _ in stream {
                seen += 1
                if seen == 5 { delegate = nil }
                if seen == 20 { break }
            }
            #expect(delegate == nil)
            #expect(capturer.delegate == nil)
            let delivered = capturer.statistics.framesDelivered
            #expect(delivered >= 20)
            // Frames go on (polled for up to 5 s: on a loaded machine the capture thread may not run for a while).
            for _ in 0..<100 where capturer.statistics.framesDelivered <= delivered {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(capturer.statistics.framesDelivered > delivered, "capture stopped when its delegate went away")
            await capturer.stopCapture()
            #expect(capturer.captureState == .idle)
        }
    }

    static func orientationFromThreadsInThisProcess() async throws {
        let delegate = CountingDelegate()
        let capturer = Self.unpacedCapturer(delegate: delegate)
        let orientations: [DeviceOrientation] = [.portrait, .portraitUpsideDown, .landscapeLeft, .landscapeRight]
        try await Self.expectNoGrowth("orientation from threads") {
            try await capturer.startCapture(target: Self.target)
            let running = Locked(4)
            let done = Completion()
            for index in 0..<4 {
                let thread = Thread {
                    for step in 0..<2_000 { capturer.deviceOrientation = orientations[(index + step) % 4] }
                    // The last thread out lets the test go on.
                    let remaining = running.withLock { count in
                        count -= 1
                        return count
                    }
                    if remaining == 0 { done.finish() }
                }
                thread.start()
            }
            await done.wait()
            capturer.deviceOrientation = .landscapeRight
            let expected = capturer.rotation
            let stream = capturer.frames(bufferingNewest: 1)
            for await frame in stream where frame.rotation == expected { break }
            await capturer.stopCapture()
        }
        #expect(delegate.counts.withLock { $0.frames } > 0)
        let valid: Set<VideoRotation> = [.degrees0, .degrees90, .degrees180, .degrees270]
        #expect(delegate.counts.withLock { $0.rotations }.isSubset(of: valid))
    }

    static func slowConsumerInThisProcess() async throws {
        let capturer = Self.unpacedCapturer(delegate: nil)
        try await Self.expectNoGrowth("slow consumer") {
            let stream = capturer.frames(bufferingNewest: 2)
            try await capturer.startCapture(target: Self.target)
            var buffers = Set<ObjectIdentifier>()
            var received = 0
            for await frame in stream {
                buffers.insert(ObjectIdentifier(frame.buffer))
                received += 1
                try await Task.sleep(for: .milliseconds(5))
                if received == 100 { break }
            }
            await capturer.stopCapture()
            let delivered = capturer.statistics.framesDelivered
            #expect(stream.droppedFrames > 0, "a consumer 5 ms per frame behind an unpaced camera dropped nothing")
            #expect(delivered >= 100 + stream.droppedFrames)
            // The stream holds at most two frames, the consumer one, the producer one: the frames come from a small,
            // fixed pool of buffers however many went by (the pool's buffers live as long as the session).
            #expect(buffers.count <= 16, "frames came from \(buffers.count) distinct buffers")
        }
    }
}
