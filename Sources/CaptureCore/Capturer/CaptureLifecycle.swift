/// The lifecycle of a ``CameraVideoCapturer`` as a value: the phase it is in, each phase carrying its own data (its
/// session, its generation, its watcher), and for every event what the capturer must do about it.
///
/// ## Contract
/// Events (``start(_:)``, ``stop()``, ``sessionEnded(generation:error:automaticallyResumes:)``,
/// ``deviceReturned(_:since:)``, ``switchTo(_:)``, and the reports of a session being made, started or failing)
/// change the value and return ``Action``s: open a session, stop one (and wait) or release one (in the background),
/// watch for a camera's return or cancel the watch, notify the delegate, finish the frame streams. The value never
/// does anything itself, never traps, and accepts any event in any phase: an event that does not apply (a late
/// report from a superseded session, a second stop) returns what cleans it up, or nothing.
///
/// Every session it is given is accounted for until it is reported released: held by the phase, or in
/// ``releasing`` with an action that stops it. A new session is opened only after the sessions still releasing
/// (``Action/open(_:generation:after:)`` names them), so a camera is never opened while its last session holds it.
///
/// The generation counts sessions: every attempt to open one and every stop moves it on, and events carry the
/// generation of the session they come from, so that a superseded session's frames and end are ignored
/// (``delivers(generation:)``).
///
/// ## Threading
/// A value, with no locks or threads of its own: the capturer keeps it under its lock, and carries the actions out
/// after releasing the lock, in order. `Session` and `Watcher` are generic so that the transitions can be tested
/// without sessions or tasks.
package struct CaptureLifecycle<Session: Sendable & Equatable, Watcher: Sendable>: Sendable {
    /// What a new session captures: the device, its format, and the size and frame rate asked for.
    package struct SessionPlan: Sendable, Hashable {
        package var device: CaptureDevice
        package var format: CaptureFormat
        package var dimensions: Dimensions
        package var fps: Double

        package init(device: CaptureDevice, format: CaptureFormat, dimensions: Dimensions, fps: Double) {
            self.device = device
            self.format = format
            self.dimensions = dimensions
            self.fps = fps
        }

        /// The plan that captures again as `configuration` did, on `device` (by default its own device).
        package init(repeating configuration: CaptureConfiguration, on device: CaptureDevice? = nil) {
            self.init(
                device: device ?? configuration.device, format: configuration.format,
                dimensions: configuration.requestedDimensions, fps: configuration.requestedFPS)
        }
    }

    /// An attempt to open a session: its generation and plan, the session once made, and why it ended if it ended
    /// before it was reported started.
    package struct Attempt: Sendable {
        package var generation: UInt64
        package var plan: SessionPlan
        package var session: Session?
        package var ended: CaptureError?
    }

    /// A running capture: its session and what it captures with.
    package struct Running: Sendable {
        package var session: Session
        package var configuration: CaptureConfiguration
    }

    /// A capture whose camera went away, waiting for it to return (``CameraVideoCapturer/automaticallyResumes``).
    package struct Paused: Sendable {
        /// The generation at the pause: names this pause to its watcher.
        package var since: UInt64
        package var error: CaptureError
        /// What the interrupted capture used; a resumption repeats it.
        package var configuration: CaptureConfiguration
        /// What waits for the camera, once started.
        package var watcher: Watcher?
        /// A resumption under way.
        package var attempt: Attempt?
    }

    /// A capture moving to another camera: the camera it leaves (to go back to if the new one fails) and the attempt.
    package struct Switching: Sendable {
        package var previous: CaptureConfiguration
        /// The state shown meanwhile: the one the switch began in (running, or paused).
        package var shown: CaptureState
        package var attempt: Attempt
        /// Set while going back to `previous`: why the switch failed.
        package var restoring: CaptureError?
    }

    /// The phases. `idle` → `starting` → `running` → `stopping` → `idle`; an error ends `starting` or `running` in
    /// `failed`; `running` ↔ `paused` when the camera goes and returns (with automatic resumption); `running` or
    /// `paused` → `switching` → `running`.
    package enum Phase: Sendable {
        case idle
        case starting(Attempt)
        case running(Running)
        case paused(Paused)
        case switching(Switching)
        /// `done` is finished when the stop has: concurrent stops wait for it.
        case stopping(done: Completion)
        case failed(CaptureError)
    }

    /// What the delegate hears.
    package enum Notice: Sendable, Hashable {
        case stopped(CaptureError?)
        case paused(CaptureError)
        case resumed(CaptureConfiguration)
    }

    /// What the capturer does, in order.
    package enum Action: Sendable {
        /// Make a session for `plan` with events of `generation`, once the sessions in `after` are released, and
        /// start it; report ``sessionMade(_:generation:)``, then ``sessionStarted(_:generation:configuration:)`` or
        /// ``sessionFailed(_:generation:error:)``.
        case open(SessionPlan, generation: UInt64, after: [Session])
        /// Stop the session and wait for it, then report ``released(_:)``.
        case stop(Session)
        /// Stop the session in the background (it ended on its own: the caller may be its capture thread), then
        /// report ``released(_:)``.
        case release(Session)
        /// Start waiting for the camera of the configuration to return; report ``watcherStarted(_:since:)``.
        case watch(CaptureConfiguration, since: UInt64)
        /// Cancel the watcher (and, where the caller can wait, wait for it).
        case cancel(Watcher)
        case notify(Notice)
        /// End the frame streams.
        case finishStreams
        /// The sessions of a stop are stopped: report ``stopFinished(_:)`` and carry out what it returns.
        case finishStop(Completion)
        /// Another caller's stop is under way: wait for it.
        case wait(Completion)
        /// The stop is over: finish its completion.
        case complete(Completion)
    }

    /// How an attempt ended, for its caller (start, resume, switch).
    package enum Outcome: Sendable, Hashable {
        /// It runs with this configuration.
        case running(CaptureConfiguration)
        case failed(CaptureError)
        /// A stop or a newer attempt took over.
        case superseded
    }

    /// A report's result: what the attempt's caller learns (`nil` while the attempt goes on) and the actions.
    package struct Step: Sendable {
        package var outcome: Outcome?
        package var actions: [Action]
    }

    /// What the watcher does when its camera is listed again.
    package enum Resumption: Sendable {
        /// Try: carry these out (an ``Action/open(_:generation:after:)``).
        case attempt([Action])
        /// Keep waiting: the camera came back without the format the capture used.
        case formatMissing
        /// Keep waiting: an attempt is already under way.
        case busy
        /// Stop watching: the capture is no longer paused by this pause.
        case over
    }

    package private(set) var phase: Phase = .idle
    package private(set) var generation: UInt64 = 0
    /// Sessions let go of and not yet reported released.
    package private(set) var releasing: [Session] = []
    /// What the running (or last) capture uses.
    package private(set) var configuration: CaptureConfiguration?

    package init() {}

    // MARK: Queries

    /// The state the capturer shows.
    package var state: CaptureState {
        switch phase {
        case .idle: .idle
        case .starting: .starting
        case .running: .running
        case .paused(let paused): .paused(paused.error)
        case .switching(let switching): switching.shown
        case .stopping: .stopping
        case .failed(let error): .failed(error)
        }
    }

    /// Whether events of `generation` are the capture's: its current session, or one being opened for it.
    package func delivers(generation: UInt64) -> Bool {
        guard generation == self.generation else { return false }
        if case .running = phase { return true }
        return attempt(of: generation).map { $0.ended == nil } ?? false
    }

    /// Whether an attempt of `generation` is still wanted (nothing superseded it).
    package func isOpening(generation: UInt64) -> Bool {
        guard let attempt = attempt(of: generation) else { return false }
        return attempt.session == nil && attempt.ended == nil
    }

    /// The configuration a switch starts from: the running or paused capture's (`nil` when there is none).
    package var switchable: CaptureConfiguration? {
        switch phase {
        case .running(let running): running.configuration
        case .paused(let paused): paused.configuration
        case .switching(let switching): switching.previous
        case .idle, .starting, .stopping, .failed: nil
        }
    }

    // MARK: Commands

    /// A start: from idle or failed, opens a session for `plan`; otherwise `invalidState`.
    package mutating func start(_ plan: SessionPlan) throws(CaptureError) -> [Action] {
        switch phase {
        case .idle, .failed:
            generation += 1
            phase = .starting(Attempt(generation: generation, plan: plan))
            return [.open(plan, generation: generation, after: releasing)]
        case .starting, .running, .paused, .switching, .stopping:
            throw CaptureError(.invalidState, "capture is \(state); stop it first", device: plan.device.id)
        }
    }

    /// A stop: stops the session (and any attempt and watcher), then ends the capture with a clean stop. While a stop
    /// is under way, waits for it; when idle or failed, returns to idle once the sessions still releasing are.
    package mutating func stop() -> [Action] {
        var actions: [Action] = []
        switch phase {
        case .stopping(let done):
            return [.wait(done)]
        case .idle:
            return releasing.map { .stop($0) }
        case .failed:
            phase = .idle
            return releasing.map { .stop($0) }
        case .starting(let attempt):
            letGo(attempt.session)
        case .running(let running):
            letGo(running.session)
        case .paused(let paused):
            if let watcher = paused.watcher { actions.append(.cancel(watcher)) }
            letGo(paused.attempt?.session)
        case .switching(let switching):
            letGo(switching.attempt.session)
        }
        generation += 1
        let done = Completion()
        phase = .stopping(done: done)
        return actions + releasing.map { .stop($0) } + [.finishStop(done)]
    }

    /// The sessions of the stop `done` are released: idle, the streams end, the delegate hears a clean stop.
    package mutating func stopFinished(_ done: Completion) -> [Action] {
        guard case .stopping(let current) = phase, current === done else { return [.complete(done)] }
        phase = .idle
        return [.notify(.stopped(nil)), .finishStreams, .complete(done)]
    }

    /// A switch to `plan`: from running, paused or switching, stops the current session (or attempt, or watcher) and
    /// opens one for `plan`; a failure goes back to the previous camera. Otherwise `invalidState`.
    package mutating func switchTo(_ plan: SessionPlan) throws(CaptureError) -> [Action] {
        var actions: [Action] = []
        let previous: CaptureConfiguration
        let shown: CaptureState
        switch phase {
        case .running(let running):
            letGo(running.session)
            actions.append(.stop(running.session))
            (previous, shown) = (running.configuration, .running)
        case .paused(let paused):
            if let watcher = paused.watcher { actions.append(.cancel(watcher)) }
            if let session = letGo(paused.attempt?.session) { actions.append(.stop(session)) }
            (previous, shown) = (paused.configuration, .paused(paused.error))
        case .switching(let switching):
            if let session = letGo(switching.attempt.session) { actions.append(.stop(session)) }
            (previous, shown) = (switching.previous, switching.shown)
        case .idle, .starting, .stopping, .failed:
            throw CaptureError(.invalidState, "switchCamera needs a running capture", device: plan.device.id)
        }
        generation += 1
        phase = .switching(
            Switching(previous: previous, shown: shown, attempt: Attempt(generation: generation, plan: plan)))
        return actions + [.open(plan, generation: generation, after: releasing)]
    }

    // MARK: Reports from the capturer

    /// The session of the attempt of `generation` was made: the attempt keeps it and goes on (no outcome), or, when
    /// superseded, it is stopped.
    package mutating func sessionMade(_ session: Session, generation: UInt64) -> Step {
        guard isOpening(generation: generation) else {
            letGo(session)
            return Step(outcome: .superseded, actions: [.stop(session)])
        }
        updateAttempt(generation) { $0.session = session }
        return Step(outcome: nil, actions: [])
    }

    /// The session of the attempt of `generation` started and captures with `configuration`.
    package mutating func sessionStarted(
        _ session: Session, generation: UInt64, configuration: CaptureConfiguration
    ) -> Step {
        if let attempt = attempt(of: generation), attempt.session == session, attempt.ended == nil {
            let running = Running(session: session, configuration: configuration)
            let resumed: Bool
            if case .paused = phase { resumed = true } else { resumed = false }
            phase = .running(running)
            self.configuration = configuration
            return Step(outcome: .running(configuration), actions: resumed ? [.notify(.resumed(configuration))] : [])
        }
        if let attempt = attempt(of: generation), attempt.session == session, let ended = attempt.ended {
            // Its session ended before this report: the attempt failed (a start's session ends as a capture does).
            return attemptFailed(attempt, error: ended)
        }
        if generation == self.generation, startEndedEarly {
            // A start whose session ended on its own before its start returned: the end was reported as a capture's
            // end (the delegate, the streams, the phase), and the start succeeded. It returns once the session is
            // released.
            self.configuration = configuration
            letGo(session)
            return Step(outcome: .running(configuration), actions: [.stop(session)])
        }
        letGo(session)
        return Step(outcome: .superseded, actions: [.stop(session)])
    }

    /// The attempt of `generation` failed with `error`: making its session (`session` nil) or starting it threw.
    package mutating func sessionFailed(_ session: Session?, generation: UInt64, error: CaptureError) -> Step {
        var step: Step
        if var attempt = attempt(of: generation), attempt.session == nil || attempt.session == session {
            attempt.session = attempt.session ?? session
            step = attemptFailed(attempt, error: attempt.ended ?? error)
        } else if generation == self.generation, startEndedEarly {
            step = Step(outcome: .failed(error), actions: [])
        } else {
            step = Step(outcome: .superseded, actions: [])
        }
        // Whatever the report, a session it names is stopped.
        if let session, letGo(session) != nil,
            !step.actions.contains(where: { if case .stop(let stopped) = $0 { stopped == session } else { false } })
        {
            step.actions.insert(.stop(session), at: 0)
        }
        return step
    }

    /// The session of `generation` ended on its own (`error` nil: its source ended cleanly). A running capture ends
    /// (failed, or idle), or with `automaticallyResumes` and a disconnection pauses and watches for the camera; a
    /// starting capture ends the same way (its start still succeeds); a resumption or a switch fails its attempt.
    package mutating func sessionEnded(
        generation: UInt64, error: CaptureError?, automaticallyResumes: Bool
    ) -> [Action] {
        guard delivers(generation: generation) else { return [] }
        switch phase {
        case .running(let running):
            letGo(running.session)
            if automaticallyResumes, let error, error.code == .deviceDisconnected {
                phase = .paused(
                    Paused(since: generation, error: error, configuration: running.configuration))
                return [
                    .release(running.session), .watch(running.configuration, since: generation),
                    .notify(.paused(error)),
                ]
            }
            phase = error.map { .failed($0) } ?? .idle
            return [.release(running.session), .notify(.stopped(error)), .finishStreams]
        case .starting(let attempt):
            phase = error.map { .failed($0) } ?? .idle
            let release = letGo(attempt.session).map { [Action.release($0)] } ?? []
            return release + [.notify(.stopped(error)), .finishStreams]
        case .paused, .switching:
            guard let attempt = attempt(of: generation), attempt.ended == nil, let session = attempt.session else {
                return []
            }
            letGo(session)
            updateAttempt(generation) { $0.ended = error ?? Self.wentAway(attempt.plan) }
            return [.release(session)]
        case .idle, .stopping, .failed:
            return []
        }
    }

    /// `session` is released: it no longer holds its camera.
    package mutating func released(_ session: Session) {
        releasing.removeAll { $0 == session }
    }

    /// The watcher of the pause `since` is running: the pause keeps it, or, if that pause is over, it is cancelled.
    package mutating func watcherStarted(_ watcher: Watcher, since: UInt64) -> [Action] {
        guard case .paused(var paused) = phase, paused.since == since, paused.watcher == nil else {
            return [.cancel(watcher)]
        }
        paused.watcher = watcher
        phase = .paused(paused)
        return []
    }

    /// The camera of the pause `since` is listed again, as `device`: try to resume in the interrupted capture's format.
    package mutating func deviceReturned(_ device: CaptureDevice, since: UInt64) -> Resumption {
        guard case .paused(var paused) = phase, paused.since == since else { return .over }
        guard paused.attempt == nil else { return .busy }
        guard device.formats.contains(paused.configuration.format) else { return .formatMissing }
        generation += 1
        let plan = SessionPlan(repeating: paused.configuration, on: device)
        paused.attempt = Attempt(generation: generation, plan: plan)
        phase = .paused(paused)
        return .attempt([.open(plan, generation: generation, after: releasing)])
    }

    // MARK: Helpers

    private static func wentAway(_ plan: SessionPlan) -> CaptureError {
        CaptureError(.deviceDisconnected, "the camera went away while starting", device: plan.device.id)
    }

    /// Whether the capture is idle or failed at the current generation: a start whose session ended before the start
    /// returned.
    private var startEndedEarly: Bool {
        switch phase {
        case .idle, .failed: true
        default: false
        }
    }

    /// The attempt of `generation`, if one is under way.
    private func attempt(of generation: UInt64) -> Attempt? {
        let attempt: Attempt?
        switch phase {
        case .starting(let starting): attempt = starting
        case .paused(let paused): attempt = paused.attempt
        case .switching(let switching): attempt = switching.attempt
        case .idle, .running, .stopping, .failed: attempt = nil
        }
        return attempt?.generation == generation ? attempt : nil
    }

    private mutating func updateAttempt(_ generation: UInt64, _ update: (inout Attempt) -> Void) {
        switch phase {
        case .starting(var attempt) where attempt.generation == generation:
            update(&attempt)
            phase = .starting(attempt)
        case .paused(var paused) where paused.attempt?.generation == generation:
            if var attempt = paused.attempt {
                update(&attempt)
                paused.attempt = attempt
            }
            phase = .paused(paused)
        case .switching(var switching) where switching.attempt.generation == generation:
            update(&switching.attempt)
            phase = .switching(switching)
        default:
            break
        }
    }

    /// Lets go of `session` (if any): it is releasing until reported released.
    @discardableResult
    private mutating func letGo(_ session: Session?) -> Session? {
        guard let session else { return nil }
        if !releasing.contains(session) { releasing.append(session) }
        return session
    }

    /// The attempt failed with `error`: a start fails, a resumption keeps waiting, a switch goes back to the previous
    /// camera, and a switch that cannot go back ends the capture with the switch's error.
    private mutating func attemptFailed(_ attempt: Attempt, error: CaptureError) -> Step {
        let stop = letGo(attempt.session).map { [Action.stop($0)] } ?? []
        switch phase {
        case .starting:
            phase = .failed(error)
            return Step(outcome: .failed(error), actions: stop)
        case .paused(var paused):
            paused.attempt = nil
            phase = .paused(paused)
            return Step(outcome: .failed(error), actions: stop)
        case .switching(var switching):
            if let switchError = switching.restoring {
                phase = .failed(switchError)
                return Step(
                    outcome: .failed(error), actions: stop + [.notify(.stopped(switchError)), .finishStreams])
            }
            generation += 1
            let plan = SessionPlan(repeating: switching.previous)
            switching.attempt = Attempt(generation: generation, plan: plan)
            switching.restoring = error
            phase = .switching(switching)
            return Step(
                outcome: .failed(error), actions: stop + [.open(plan, generation: generation, after: releasing)])
        case .idle, .running, .stopping, .failed:
            return Step(outcome: .failed(error), actions: stop)
        }
    }
}

extension CaptureLifecycle.Attempt {
    init(generation: UInt64, plan: CaptureLifecycle.SessionPlan) {
        self.init(generation: generation, plan: plan, session: nil, ended: nil)
    }
}

extension CaptureLifecycle.Action: Equatable where Watcher: Equatable {
    package static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.open(let a, let g, let s), .open(let b, let h, let t)): a == b && g == h && s == t
        case (.stop(let a), .stop(let b)), (.release(let a), .release(let b)): a == b
        case (.watch(let a, let g), .watch(let b, let h)): a == b && g == h
        case (.cancel(let a), .cancel(let b)): a == b
        case (.notify(let a), .notify(let b)): a == b
        case (.finishStreams, .finishStreams): true
        case (.finishStop(let a), .finishStop(let b)), (.wait(let a), .wait(let b)),
            (.complete(let a), .complete(let b)):
            a === b
        default: false
        }
    }
}
