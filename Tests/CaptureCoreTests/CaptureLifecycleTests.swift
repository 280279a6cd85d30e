@testable import CaptureCore
import Testing

/// The capturer's lifecycle as a value, with no threads: sessions are numbers, watchers are numbers.
@Suite("The capturer's lifecycle, without threads")
struct CaptureLifecycleTests {
    typealias Lifecycle = CaptureLifecycle<Int, Int>
    typealias Action = Lifecycle.Action

    static let format = CaptureFormat(.nv12, 640, 480, fps: [30])
    static let otherFormat = CaptureFormat(.yuyv, 320, 240, fps: [15])
    static let front = CaptureDevice(id: "front", name: "Front", kind: .recorded, position: .front, formats: [format])
    static let back = CaptureDevice(id: "back", name: "Back", kind: .recorded, position: .back, formats: [format])
    static let frontPlan = Lifecycle.SessionPlan(
        device: front, format: format, dimensions: Dimensions(width: 640, height: 480), fps: 30)
    static let backPlan = Lifecycle.SessionPlan(
        device: back, format: format, dimensions: Dimensions(width: 640, height: 480), fps: 30)
    static let unplugged = CaptureError(.deviceDisconnected, "unplugged")
    static let busy = CaptureError(.deviceBusy, "busy")

    static func configuration(_ plan: Lifecycle.SessionPlan) -> CaptureConfiguration {
        CaptureConfiguration(
            device: plan.device, format: plan.format, requestedDimensions: plan.dimensions, requestedFPS: plan.fps,
            granted: GrantedFormat(pixelFormat: plan.format.pixelFormat, dimensions: plan.dimensions, fps: plan.fps),
            output: .nv12)
    }

    /// Starts on the front camera with session 1: running at generation 1.
    static func running() throws -> Lifecycle {
        var lifecycle = Lifecycle()
        #expect(try lifecycle.start(frontPlan) == [.open(frontPlan, generation: 1, after: [])])
        #expect(lifecycle.sessionMade(1, generation: 1).outcome == nil)
        let step = lifecycle.sessionStarted(1, generation: 1, configuration: configuration(frontPlan))
        #expect(step.outcome == .running(configuration(frontPlan)))
        #expect(lifecycle.state == .running)
        return lifecycle
    }

    @Test("start, run, stop: the session is stopped before the streams end and the delegate hears of it, once")
    func startRunStop() throws {
        var lifecycle = try Self.running()
        #expect(lifecycle.delivers(generation: 1))
        #expect(throws: CaptureError.self) { try lifecycle.start(Self.backPlan) }
        let actions = lifecycle.stop()
        guard case .stopping(let done) = lifecycle.phase else {
            Issue.record("not stopping: \(lifecycle.phase)")
            return
        }
        #expect(actions == [.stop(1), .finishStop(done)])
        #expect(!lifecycle.delivers(generation: 1), "a stopping capture delivered its old session's frames")
        #expect(lifecycle.stop() == [.wait(done)], "a concurrent stop does not wait for the one under way")
        #expect(throws: CaptureError.self) { try lifecycle.start(Self.frontPlan) }
        lifecycle.released(1)
        #expect(lifecycle.stopFinished(done) == [.notify(.stopped(nil)), .finishStreams, .complete(done)])
        #expect(lifecycle.state == .idle)
        #expect(lifecycle.stop() == [], "a stop when idle does something")
    }

    @Test("a session that fails ends the capture; the next start opens only after it is released")
    func endedThenRestart() throws {
        var lifecycle = try Self.running()
        let actions = lifecycle.sessionEnded(generation: 1, error: Self.busy, automaticallyResumes: true)
        #expect(actions == [.release(1), .notify(.stopped(Self.busy)), .finishStreams])
        #expect(lifecycle.state == .failed(Self.busy))
        #expect(lifecycle.sessionEnded(generation: 1, error: nil, automaticallyResumes: false) == [])
        #expect(try lifecycle.start(Self.frontPlan) == [.open(Self.frontPlan, generation: 2, after: [1])])
        lifecycle.released(1)
        #expect(lifecycle.stop() == [.finishStop(try #require(Self.stopping(lifecycle)))])
    }

    static func stopping(_ lifecycle: Lifecycle) -> Completion? {
        if case .stopping(let done) = lifecycle.phase { done } else { nil }
    }

    @Test("unplugged with automatic resumption: paused, watched; the camera's return resumes in the same format")
    func pauseAndResume() throws {
        var lifecycle = try Self.running()
        let actions = lifecycle.sessionEnded(generation: 1, error: Self.unplugged, automaticallyResumes: true)
        let configuration = Self.configuration(Self.frontPlan)
        #expect(actions == [.release(1), .watch(configuration, since: 1), .notify(.paused(Self.unplugged))])
        #expect(lifecycle.state == .paused(Self.unplugged))
        #expect(lifecycle.watcherStarted(7, since: 1) == [])
        #expect(lifecycle.watcherStarted(8, since: 1) == [.cancel(8)], "a second watcher was kept")
        var changed = Self.front
        changed.formats = [Self.otherFormat]
        guard case .formatMissing = lifecycle.deviceReturned(changed, since: 1) else {
            Issue.record("a camera without the format was resumed")
            return
        }
        guard case .attempt(let open) = lifecycle.deviceReturned(Self.front, since: 1) else {
            Issue.record("the returned camera was not tried")
            return
        }
        #expect(open == [.open(Self.frontPlan, generation: 2, after: [1])])
        guard case .busy = lifecycle.deviceReturned(Self.front, since: 1) else {
            Issue.record("two resumptions at once")
            return
        }
        #expect(lifecycle.sessionMade(2, generation: 2).outcome == nil)
        let step = lifecycle.sessionStarted(2, generation: 2, configuration: configuration)
        #expect(step.outcome == .running(configuration))
        #expect(step.actions == [.notify(.resumed(configuration))])
        guard case .over = lifecycle.deviceReturned(Self.front, since: 1) else {
            Issue.record("the watcher was not told its pause is over")
            return
        }
    }

    @Test("a failed resumption keeps waiting; a stop while paused cancels the watcher and stops the attempt")
    func pausedFailuresAndStop() throws {
        var lifecycle = try Self.running()
        _ = lifecycle.sessionEnded(generation: 1, error: Self.unplugged, automaticallyResumes: true)
        _ = lifecycle.watcherStarted(7, since: 1)
        _ = lifecycle.deviceReturned(Self.front, since: 1)
        let failed = lifecycle.sessionFailed(nil, generation: 2, error: Self.busy)
        #expect(failed.outcome == .failed(Self.busy))
        #expect(lifecycle.state == .paused(Self.unplugged))
        _ = lifecycle.deviceReturned(Self.front, since: 1)
        #expect(lifecycle.sessionMade(2, generation: 3).outcome == nil)
        // The resumed session ends while starting: the attempt fails when its start is reported.
        #expect(
            lifecycle.sessionEnded(generation: 3, error: Self.unplugged, automaticallyResumes: true) == [.release(2)])
        let late = lifecycle.sessionStarted(2, generation: 3, configuration: Self.configuration(Self.frontPlan))
        #expect(late.outcome == .failed(Self.unplugged))
        #expect(lifecycle.state == .paused(Self.unplugged))
        _ = lifecycle.deviceReturned(Self.front, since: 1)
        #expect(lifecycle.sessionMade(3, generation: 4).outcome == nil)
        let actions = lifecycle.stop()
        let done = try #require(Self.stopping(lifecycle))
        #expect(actions == [.cancel(7), .stop(1), .stop(2), .stop(3), .finishStop(done)])
        let superseded = lifecycle.sessionStarted(3, generation: 4, configuration: Self.configuration(Self.frontPlan))
        #expect(superseded.outcome == .superseded)
    }

    @Test("a stop while starting: the session made afterwards is stopped, the start learns it was superseded")
    func stopWhileStarting() throws {
        var lifecycle = Lifecycle()
        _ = try lifecycle.start(Self.frontPlan)
        let actions = lifecycle.stop()
        #expect(actions == [.finishStop(try #require(Self.stopping(lifecycle)))])
        let made = lifecycle.sessionMade(1, generation: 1)
        #expect(made.outcome == .superseded)
        #expect(made.actions == [.stop(1)])
    }

    @Test("a start whose session ends before the start returns: the end is told once, the start succeeds")
    func startEndsEarly() throws {
        var lifecycle = Lifecycle()
        _ = try lifecycle.start(Self.frontPlan)
        _ = lifecycle.sessionMade(1, generation: 1)
        let ended = lifecycle.sessionEnded(generation: 1, error: Self.busy, automaticallyResumes: true)
        #expect(ended == [.release(1), .notify(.stopped(Self.busy)), .finishStreams])
        let step = lifecycle.sessionStarted(1, generation: 1, configuration: Self.configuration(Self.frontPlan))
        #expect(step.outcome == .running(Self.configuration(Self.frontPlan)))
        #expect(step.actions == [.stop(1)], "the start returns before its session is released")
        #expect(lifecycle.state == .failed(Self.busy))
        #expect(lifecycle.configuration == Self.configuration(Self.frontPlan))
    }

    @Test("a switch stops the old camera before opening the new; a failed switch goes back, then ends if that fails")
    func switching() throws {
        var lifecycle = try Self.running()
        #expect(try lifecycle.switchTo(Self.backPlan) == [.stop(1), .open(Self.backPlan, generation: 2, after: [1])])
        #expect(lifecycle.state == .running)
        #expect(!lifecycle.delivers(generation: 1), "the old camera's frames still count")
        lifecycle.released(1)
        _ = lifecycle.sessionMade(2, generation: 2)
        let failed = lifecycle.sessionFailed(2, generation: 2, error: Self.busy)
        #expect(failed.outcome == .failed(Self.busy))
        #expect(failed.actions == [.stop(2), .open(Self.frontPlan, generation: 3, after: [2])])
        lifecycle.released(2)
        let restoreFailed = lifecycle.sessionFailed(nil, generation: 3, error: Self.unplugged)
        #expect(restoreFailed.actions == [.notify(.stopped(Self.busy)), .finishStreams])
        #expect(lifecycle.state == .failed(Self.busy))

        var idle = Lifecycle()
        #expect(throws: CaptureError.self) { try idle.switchTo(Self.backPlan) }
    }

    @Test("a switch that goes back to the previous camera leaves the capture running on it")
    func switchRestores() throws {
        var lifecycle = try Self.running()
        _ = try lifecycle.switchTo(Self.backPlan)
        _ = lifecycle.sessionFailed(nil, generation: 2, error: Self.busy)
        _ = lifecycle.sessionMade(2, generation: 3)
        let restored = lifecycle.sessionStarted(2, generation: 3, configuration: Self.configuration(Self.frontPlan))
        #expect(restored.outcome == .running(Self.configuration(Self.frontPlan)))
        #expect(lifecycle.state == .running)
        #expect(lifecycle.configuration?.device.id == "front")
    }

    // MARK: Every pair of events in every state

    /// An event of the exhaustive test, applied with what the lifecycle holds now (its attempt, its pause).
    enum Event: CaseIterable {
        case start, stop, switchTo, made, madeStale, started, startedStale, failed, endedUnplugged
        case endedUnpluggedNoResume, endedClean, endedStale, returned, returnedChanged, watcherStarted, released
        case stopFinished
    }

    /// Drives a lifecycle with events and checks, after each, what must always hold.
    struct Harness {
        var lifecycle = Lifecycle()
        var nextID = 1
        /// Sessions given to the lifecycle, the ones it asked to be stopped, and those reported released.
        var given: Set<Int> = []
        var stopsAsked: Set<Int> = []
        var released: Set<Int> = []
        var watchers: Set<Int> = []
        /// Watchers cancelled, or ended by their own resumption.
        var finished: Set<Int> = []
        /// Whether the frame streams of an accepted start are still open.
        var streamsOpen = false
        var lastGeneration: UInt64 = 0
        var trail: [Event] = []

        var attempt: Lifecycle.Attempt? {
            switch lifecycle.phase {
            case .starting(let attempt): attempt
            case .paused(let paused): paused.attempt
            case .switching(let switching): switching.attempt
            default: nil
            }
        }

        var held: [Int] {
            switch lifecycle.phase {
            case .running(let running): [running.session]
            default: attempt.flatMap { $0.ended == nil ? $0.session : nil }.map { [$0] } ?? []
            }
        }

        var since: UInt64 {
            if case .paused(let paused) = lifecycle.phase { paused.since } else { lifecycle.generation }
        }

        mutating func newSession() -> Int {
            defer { nextID += 1 }
            given.insert(nextID)
            return nextID
        }

        mutating func apply(_ event: Event) {
            trail.append(event)
            let generation = attempt?.generation ?? lifecycle.generation
            var actions: [Action] = []
            switch event {
            case .start:
                if let open = try? lifecycle.start(CaptureLifecycleTests.frontPlan) {
                    streamsOpen = true
                    actions = open
                }
            case .stop:
                actions = lifecycle.stop()
            case .switchTo:
                actions = (try? lifecycle.switchTo(CaptureLifecycleTests.backPlan)) ?? []
            case .made:
                actions = lifecycle.sessionMade(newSession(), generation: generation).actions
            case .madeStale:
                actions = lifecycle.sessionMade(newSession(), generation: generation &- 1).actions
            case .started:
                let session = attempt?.session ?? newSession()
                let plan = attempt?.plan ?? CaptureLifecycleTests.frontPlan
                var watcher: Int?
                if case .paused(let paused) = lifecycle.phase { watcher = paused.watcher }
                let step = lifecycle.sessionStarted(
                    session, generation: generation, configuration: CaptureLifecycleTests.configuration(plan))
                // A resumption that runs ends its watcher's loop: the watcher is what reported it.
                if case .running = step.outcome, let watcher { finished.insert(watcher) }
                actions = step.actions
            case .startedStale:
                actions =
                    lifecycle.sessionStarted(
                        newSession(), generation: generation &- 1,
                        configuration: CaptureLifecycleTests.configuration(CaptureLifecycleTests.frontPlan)
                    ).actions
            case .failed:
                // A start that fails never ran: its streams stay open for the next start.
                if case .starting = lifecycle.phase { streamsOpen = false }
                actions =
                    lifecycle.sessionFailed(attempt?.session, generation: generation, error: CaptureLifecycleTests.busy)
                    .actions
            case .endedUnplugged, .endedUnpluggedNoResume, .endedClean, .endedStale:
                let error: CaptureError? = event == .endedClean ? nil : CaptureLifecycleTests.unplugged
                actions = lifecycle.sessionEnded(
                    generation: event == .endedStale ? lifecycle.generation &- 1 : lifecycle.generation, error: error,
                    automaticallyResumes: event == .endedUnplugged)
            case .returned, .returnedChanged:
                var device = CaptureLifecycleTests.front
                if event == .returnedChanged { device.formats = [CaptureLifecycleTests.otherFormat] }
                if case .attempt(let open) = lifecycle.deviceReturned(device, since: since) { actions = open }
            case .watcherStarted:
                let watcher = 100 + nextID
                nextID += 1
                watchers.insert(watcher)
                actions = lifecycle.watcherStarted(watcher, since: since)
            case .released:
                for session in lifecycle.releasing {
                    check(stopsAsked.contains(session), "\(session) released before a stop was asked for")
                    released.insert(session)
                    lifecycle.released(session)
                }
            case .stopFinished:
                if case .stopping(let done) = lifecycle.phase, lifecycle.releasing.isEmpty {
                    actions = lifecycle.stopFinished(done)
                } else {
                    actions = lifecycle.stopFinished(Completion())
                }
            }
            record(actions)
            checkInvariants()
        }

        mutating func record(_ actions: [Action]) {
            let finishes = actions.filter { $0 == .finishStreams }.count
            let stops = actions.filter { if case .notify(.stopped) = $0 { true } else { false } }.count
            check(finishes == stops, "the streams end without the delegate hearing of it, or the other way: \(actions)")
            for action in actions {
                switch action {
                case .stop(let session), .release(let session):
                    stopsAsked.insert(session)
                case .cancel(let watcher):
                    finished.insert(watcher)
                case .finishStreams:
                    check(streamsOpen, "the streams ended twice")
                    streamsOpen = false
                case .open(_, let generation, let after):
                    check(generation == lifecycle.generation, "an open for a stale generation")
                    check(attempt?.generation == generation && attempt?.session == nil, "an open with no attempt")
                    check(Set(after) == Set(lifecycle.releasing), "an open that does not wait for every release")
                case .watch(_, let since):
                    guard case .paused(let paused) = lifecycle.phase, paused.since == since else {
                        check(false, "a watch outside its pause")
                        break
                    }
                default:
                    break
                }
            }
        }

        func checkInvariants() {
            check(lifecycle.generation >= lastGeneration, "the generation went back")
            check(held.count <= 1, "more than one session held")
            for session in held {
                check(!lifecycle.releasing.contains(session), "session \(session) both held and releasing")
            }
            for session in given.subtracting(released) {
                let accounted = held.contains(session) || lifecycle.releasing.contains(session)
                check(accounted, "session \(session) lost: neither held nor being released")
            }
            for session in lifecycle.releasing {
                check(stopsAsked.contains(session), "session \(session) releasing with no stop asked for")
            }
            for watcher in watchers where !finished.contains(watcher) {
                guard case .paused(let paused) = lifecycle.phase, paused.watcher == watcher else {
                    check(false, "watcher \(watcher) left running")
                    continue
                }
            }
            switch lifecycle.phase {
            case .idle, .failed:
                check(!streamsOpen, "an ended capture left its streams open")
                check(held.isEmpty, "an ended capture holds a session")
            case .running(let running):
                check(lifecycle.configuration == running.configuration, "the configuration is not the running one")
            default:
                break
            }
            check(!lifecycle.delivers(generation: lifecycle.generation &+ 1), "a future generation delivers")
            check(!lifecycle.delivers(generation: lifecycle.generation &- 1), "a past generation delivers")
        }

        func check(_ condition: Bool, _ message: String) {
            if !condition {
                Issue.record("\(message) (after \(trail.map { "\($0)" }.joined(separator: ", ")))")
            }
        }
    }

    /// The states to start from, each as the events that reach it from idle.
    static let states: [(String, [Event])] = [
        ("idle", []),
        ("starting", [.start]),
        ("starting with its session", [.start, .made]),
        ("running", [.start, .made, .started]),
        ("failed", [.start, .made, .started, .endedUnpluggedNoResume]),
        ("idle after the source ended", [.start, .made, .started, .endedClean]),
        ("failed to start", [.start, .failed]),
        ("paused", [.start, .made, .started, .endedUnplugged, .watcherStarted]),
        ("paused, resuming", [.start, .made, .started, .endedUnplugged, .watcherStarted, .returned]),
        (
            "paused, resuming with its session",
            [.start, .made, .started, .endedUnplugged, .watcherStarted, .returned, .made]
        ),
        ("switching", [.start, .made, .started, .switchTo]),
        ("switching with its session", [.start, .made, .started, .switchTo, .made]),
        ("switching back", [.start, .made, .started, .switchTo, .made, .failed]),
        ("switching from paused", [.start, .made, .started, .endedUnplugged, .watcherStarted, .switchTo]),
        ("stopping", [.start, .made, .started, .stop]),
        ("stopping with its sessions released", [.start, .made, .started, .stop, .released]),
    ]

    @Test(
        "every pair of events in every state keeps every session accounted for, and the streams end once",
        arguments: 0..<states.count)
    func everyPair(_ index: Int) {
        let (_, path) = Self.states[index]
        for first in Event.allCases {
            for second in Event.allCases {
                var harness = Harness()
                for event in path { harness.apply(event) }
                harness.apply(first)
                harness.apply(second)
                // Whatever happened, a stop and the releases it asks for bring it back to idle.
                harness.apply(.stop)
                harness.apply(.released)
                harness.apply(.stopFinished)
                harness.check(harness.lifecycle.state == .idle, "not idle after a stop: \(harness.lifecycle.state)")
                harness.check(harness.lifecycle.releasing.isEmpty, "sessions left releasing after a stop")
            }
        }
    }

    @Test("the paths to the states reach them")
    func pathsReachTheirStates() {
        let expected: [CaptureState] = [
            .idle, .starting, .starting, .running, .failed(Self.unplugged), .idle, .failed(Self.busy),
            .paused(Self.unplugged), .paused(Self.unplugged), .paused(Self.unplugged), .running, .running, .running,
            .paused(Self.unplugged), .stopping, .stopping,
        ]
        for (index, (name, path)) in Self.states.enumerated() {
            var harness = Harness()
            for event in path { harness.apply(event) }
            #expect(harness.lifecycle.state == expected[index], "\(name)")
        }
    }
}
