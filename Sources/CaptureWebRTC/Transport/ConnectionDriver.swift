internal import CaptureDTLS
internal import CaptureICE
internal import CaptureNet
internal import CaptureCall
internal import CaptureCore
internal import CaptureRTP
internal import CaptureVP8
import Foundation
import Logging

/// What the owner's threads hand the driver thread: commands, and the frames the encoder thread sends.
struct DriverInbox {
    enum Command {
        case start(WebRTCConnection.Remote, ConnectionMedia?)
        case addRemoteCandidate(ICECandidate)
        case addICEServers(stun: [SocketAddress], turn: [TURNServer], events: AsyncStream<ICEEvent>.Continuation)
        case pictureLossIndication(mediaSSRC: UInt32)
        case nack(mediaSSRC: UInt32, sequenceNumbers: [UInt16])
        /// W3C stats at the driver's now, for an async caller.
        case statsReport(CheckedContinuation<WebRTCStatsReport, Never>)
        case close
    }

    var commands: [Command] = []
    var frames: [EncodedFrame] = []
    /// A wake-up is on its way (the notifier was signalled since the driver last emptied the inbox).
    var wakePending = false
    /// Frames dropped because the driver had fallen this far behind the encoder.
    var framesDropped = 0
    /// How many frames may wait before the oldest is dropped: 30 per stream (one second of each simulcast layer).
    var frameLimit = 30
    /// The owner asked to close: no more commands are taken (but stats requests, until the thread ends).
    var closing = false
    /// The driver thread ended: nothing is taken; the last stats are in ``DriverView/lastStats``.
    var finished = false
}

/// What the driver publishes for the owner's synchronous getters, and the async callers waiting on it.
struct DriverView {
    var state = WebRTCConnection.State.new
    var statistics = WebRTCTransportStatistics()
    var iceState = ICEState.new
    var iceStatistics = ICEStatistics()
    var turnAllocations: [TURNAllocationStatistics] = []
    var localCandidates: [ICECandidate] = []
    var selectedPair: ICECandidatePair?
    var mediaStatistics: VideoSenderStatistics?
    /// Each stream's figures, simulcast layer 0 first.
    var layerStatistics: [VideoSenderStatistics] = []
    var isGatheringComplete = false
    /// The W3C stats as the transport was made, then as the driver thread ended (for a caller refused after that).
    var lastStats: WebRTCStatsReport
    /// The driver thread has ended: sockets closed, nothing more will change.
    var finished = false
    var nextWaiterID: UInt64 = 0
    var connectWaiters: [UInt64: CheckedContinuation<Result<DTLSSRTPKeys, WebRTCTransportError>, Never>] = [:]
    var gatherWaiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    var finishWaiters: [CheckedContinuation<Void, Never>] = []
    var endWaiters: [UInt64: CheckedContinuation<WebRTCTransportError?, Never>] = [:]
    /// Waiters whose timeout fired before they were registered.
    var expired: Set<UInt64> = []
    /// Where gathering events go after ``WebRTCTransport/addICEServers(stun:turn:)``, until gathering completes.
    var gathering: AsyncStream<ICEEvent>.Continuation?

    /// What an end waiter gets now: `.some(error)` once failed, `.some(nil)` once closed or finished, `nil` while the
    /// transport lives.
    var endResult: WebRTCTransportError?? {
        switch state {
        case .failed(let error): .some(error)
        case .closed: .some(nil)
        case .new, .connecting, .connected: finished ? .some(nil) : nil
        }
    }

    /// The result a connect waiter gets now, or `nil` while connecting.
    var connectResult: Result<DTLSSRTPKeys, WebRTCTransportError>? {
        switch state {
        case .connected(let keys): .success(keys)
        case .failed(let error): .failure(error)
        case .closed: .failure(WebRTCTransportError(.closed, "the transport was closed"))
        case .new, .connecting: finished ? .failure(WebRTCTransportError(.closed, "the transport was closed")) : nil
        }
    }
}

/// The state the owner and the driver thread share, each part behind its own lock; no system call is made under
/// either (continuations are resumed and the notifier signalled after the lock is let go).
final class DriverShared: Sendable {
    let inbox = Locked(DriverInbox())
    let view: Locked<DriverView>
    let pipeline = Locked(WeakEncoderControl())
    let wake: EventNotifier

    /// `stats` is the connection's report as it was made (what a stats request refused gets until the driver ends).
    init(wake: EventNotifier, stats: WebRTCStatsReport) {
        self.wake = wake
        view = Locked(DriverView(lastStats: stats))
    }

    /// Queues a command and wakes the driver; `false` once the transport is closing.
    @discardableResult
    func submit(_ command: DriverInbox.Command) -> Bool {
        let (accepted, signal) = inbox.withLock { inbox -> (Bool, Bool) in
            if case .statsReport = command {
                guard !inbox.finished else { return (false, false) }
            } else {
                guard !inbox.closing else { return (false, false) }
            }
            if case .close = command { inbox.closing = true }
            inbox.commands.append(command)
            defer { inbox.wakePending = true }
            return (true, !inbox.wakePending)
        }
        if signal { wake.signal() }
        return accepted
    }

    /// Queues a frame for the driver (the encoder thread): the oldest is dropped, and a key frame of its layer asked
    /// for, when the driver has fallen `DriverInbox/frameLimit` frames behind.
    func submit(frame: EncodedFrame) {
        let (signal, droppedLayer) = inbox.withLock { inbox -> (Bool, Int?) in
            guard !inbox.closing else { return (false, nil) }
            var dropped: Int?
            if inbox.frames.count >= inbox.frameLimit {
                dropped = inbox.frames.removeFirst().simulcastIndex
                inbox.framesDropped += 1
            }
            inbox.frames.append(frame)
            defer { inbox.wakePending = true }
            return (!inbox.wakePending, dropped)
        }
        if signal { wake.signal() }
        if let droppedLayer {
            pipeline.withLock { $0.pipeline }?.requestKeyFrame(
                reason: .pictureLossIndication, simulcastIndex: droppedLayer)
        }
    }
}

/// The connection and its sockets, handed from the owner's thread to the driver thread.
///
/// `@unchecked Sendable` is sound: the owner creates both, reads nothing of the connection after handing it over
/// (what it shows comes from ``DriverView``), and the hand-over is the thread's start, which orders everything the
/// owner did before it; from then on only the driver thread touches `connection`. The sockets are `Sendable`.
final class ConnectionHandoff: @unchecked Sendable {
    let connection: WebRTCConnection
    let sockets: [UDPSocket]

    init(connection: WebRTCConnection, sockets: [UDPSocket]) {
        self.connection = connection
        self.sockets = sockets
    }
}

/// The driver: one thread per connection that owns the ``WebRTCConnection`` and its sockets. It waits in `ppoll`
/// until a socket is readable, the owner signals (a command, a frame) or the connection's ``WebRTCConnection/nextTimeout``
/// comes, feeds that to the connection, sends what it polls and publishes what changed. No tick: an idle connection
/// wakes for its own timers only (consent about every 5 s, a sender report about every second).
enum ConnectionDriver {
    /// The longest a burst of received datagrams may hold the loop before commands and timers get their turn.
    static let receiveBatch = 64
    /// How often, at most, the figures of a busy connection are published for the getters.
    static let publishInterval = Duration.milliseconds(50)

    static func run(_ handoff: ConnectionHandoff, shared: DriverShared, logger: Logger) {
        let connection = handoff.connection
        let sockets = handoff.sockets
        var poller = SocketPoller(descriptors: sockets.map(\.pollDescriptor) + [shared.wake.descriptor])
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
        defer { buffer.deallocate() }
        var commands: [DriverInbox.Command] = []
        var frames: [EncodedFrame] = []
        frames.reserveCapacity(32)
        var loop = DriverLoop(connection: connection, sockets: sockets, shared: shared, logger: logger)
        var now = ContinuousClock.now
        connection.handleTimeout(at: now)
        while true {
            loop.flush()
            loop.publishIfDue(now: now)
            if case .closed = connection.state { break }
            var deadline = connection.nextTimeout
            if let publishAt = loop.pendingPublishDeadline { deadline = min(deadline ?? publishAt, publishAt) }
            do throws(SocketError) {
                try poller.wait(timeout: deadline.map { now.duration(to: $0) })
            } catch {
                logger.error("the connection driver cannot wait", metadata: ["error": "\(error)"])
                connection.close(at: ContinuousClock.now)
                loop.flush()
                break
            }
            now = ContinuousClock.now
            // Whatever woke the loop (a datagram, a frame, a timer) may change the figures.
            loop.dirty = true
            for (index, socket) in sockets.enumerated() where poller.isReady(index) {
                for _ in 0..<receiveBatch {
                    let received: (count: Int, source: SocketAddress)?
                    do throws(SocketError) {
                        received = try socket.receiveIfReady(into: buffer)
                    } catch {
                        logger.warning("receive failed", metadata: ["error": "\(error)"])
                        break
                    }
                    guard let received else { break }
                    connection.handle(
                        datagram: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<received.count]),
                        from: received.source, to: socket.localAddress, at: now)
                    loop.flush()
                }
            }
            if poller.isReady(sockets.count) { shared.wake.reset() }
            shared.inbox.withLock { inbox in
                swap(&inbox.commands, &commands)
                swap(&inbox.frames, &frames)
                inbox.wakePending = false
            }
            for command in commands {
                loop.apply(command, at: now)
                loop.flush()
            }
            commands.removeAll(keepingCapacity: true)
            if !frames.isEmpty {
                // The encoder's padding target follows its layout (a new input size, a CPU step): read with its
                // frames, before they are paced.
                let pipeline = shared.pipeline.withLock { $0.pipeline }
                connection.setPaddingTarget(kbps: pipeline?.paddingTargetKbps ?? 0)
            }
            for frame in frames {
                connection.send(frame: frame, at: now)
                loop.flush()
            }
            frames.removeAll(keepingCapacity: true)
            if let next = connection.nextTimeout, next <= now {
                connection.handleTimeout(at: now)
            }
        }
        for socket in sockets { socket.close() }
        loop.finish()
    }
}

/// The driver thread's side: sends, follows events, publishes.
struct DriverLoop {
    let connection: WebRTCConnection
    let sockets: [UDPSocket]
    let shared: DriverShared
    let logger: Logger
    var socketSendFailures = 0
    /// Something changed since the last publish.
    var dirty = true
    /// Something changed that a waiter or getter must see at once (state, candidates).
    var urgent = true
    var lastPublish: ContinuousClock.Instant?

    init(connection: WebRTCConnection, sockets: [UDPSocket], shared: DriverShared, logger: Logger) {
        self.connection = connection
        self.sockets = sockets
        self.shared = shared
        self.logger = logger
    }

    /// When the next publish is due, if one is pending.
    var pendingPublishDeadline: ContinuousClock.Instant? {
        guard dirty, let lastPublish else { return nil }
        return lastPublish + ConnectionDriver.publishInterval
    }

    mutating func apply(_ command: DriverInbox.Command, at now: ContinuousClock.Instant) {
        if case .statsReport(let waiter) = command {
            waiter.resume(returning: connection.statsReport(at: now))
            return
        }
        dirty = true
        urgent = true
        switch command {
        case .start(let remote, let media): connection.start(remote: remote, media: media, at: now)
        case .addRemoteCandidate(let candidate): connection.addRemoteCandidate(candidate, at: now)
        case .addICEServers(let stun, let turn, let events):
            let previous = shared.view.withLock { view in
                defer { view.gathering = events }
                return view.gathering
            }
            previous?.finish()
            // The candidates known already come first (the caller skips those it signalled), so that none gathered
            // between its last look and this command is missed.
            for candidate in connection.localCandidates { events.yield(.localCandidate(candidate)) }
            let added = connection.addICEServers(stun: stun, turn: turn, at: now)
            if added == 0, connection.isGatheringComplete {
                let stream = shared.view.withLock { view in
                    defer { view.gathering = nil }
                    return view.gathering
                }
                stream?.yield(.gatheringComplete)
                stream?.finish()
            }
        case .pictureLossIndication(let ssrc): connection.sendPictureLossIndication(mediaSSRC: ssrc, at: now)
        case .nack(let ssrc, let numbers): connection.sendNACK(mediaSSRC: ssrc, sequenceNumbers: numbers, at: now)
        case .close: connection.close(at: now)
        case .statsReport: break
        }
    }

    /// Sends what the connection queued, then follows its events.
    mutating func flush() {
        while let transmit = connection.pollTransmit() {
            let socket = sockets.first { $0.localAddress.family == transmit.destination.family }
            if socket?.send(transmit.bytes, to: transmit.destination) != true { socketSendFailures += 1 }
        }
        while let event = connection.pollEvent() { follow(event) }
    }

    private mutating func follow(_ event: ConnectionEvent) {
        dirty = true
        switch event {
        case .localCandidate(let candidate):
            urgent = true
            // Published before the stream says so, so that a reader of the stream finds it among the candidates.
            let candidates = connection.localCandidates
            shared.view.withLock { view in
                view.localCandidates = candidates
                return view.gathering
            }?.yield(.localCandidate(candidate))
        case .relayFailed(let error):
            shared.view.withLock { $0.gathering }?.yield(.relayFailed(error))
        case .gatheringComplete:
            urgent = true
            let candidates = connection.localCandidates
            let stream = shared.view.withLock { view in
                defer { view.gathering = nil }
                view.localCandidates = candidates
                view.isGatheringComplete = true
                return view.gathering
            }
            stream?.yield(.gatheringComplete)
            stream?.finish()
        case .keyFrameRequested(let reason, let layer):
            shared.pipeline.withLock { $0.pipeline }?.requestKeyFrame(reason: reason, simulcastIndex: layer)
        case .targetBitrateChanged(let kbps, let reason):
            _ = shared.pipeline.withLock { $0.pipeline }?.setTargetBitrate(kbps: kbps, reason: reason)
        case .frameDroppingChanged(let drop):
            shared.pipeline.withLock { $0.pipeline }?.setCongestionFrameDropping(drop)
        case .iceStateChanged, .selectedPair, .connected, .failed, .closed:
            urgent = true
        case .rtpReceived:
            break
        }
    }

    /// Publishes the figures when something urgent changed, or when something changed and the interval passed.
    mutating func publishIfDue(now: ContinuousClock.Instant) {
        guard dirty else { return }
        if !urgent, let lastPublish, now < lastPublish + ConnectionDriver.publishInterval { return }
        publish(now: now)
    }

    private mutating func publish(now: ContinuousClock.Instant) {
        dirty = false
        urgent = false
        lastPublish = now
        var statistics = connection.statistics
        statistics.mediaSendErrors += socketSendFailures
        statistics.framesDropped = shared.inbox.withLock { $0.framesDropped }
        let state = connection.state
        let iceState = connection.iceState
        let snapshot = (
            statistics, connection.iceStatistics, connection.turnAllocations, connection.localCandidates,
            connection.selectedPair, connection.layerStatistics, connection.isGatheringComplete
        )
        let (connectWaiters, gatherWaiters, endWaiters) = shared.view.withLock { view in
            view.state = state
            view.iceState = iceState
            view.statistics = snapshot.0
            view.iceStatistics = snapshot.1
            view.turnAllocations = snapshot.2
            view.localCandidates = snapshot.3
            view.selectedPair = snapshot.4
            view.mediaStatistics = snapshot.5.first
            view.layerStatistics = snapshot.5
            view.isGatheringComplete = snapshot.6
            var connect:
                [(
                    CheckedContinuation<Result<DTLSSRTPKeys, WebRTCTransportError>, Never>,
                    Result<DTLSSRTPKeys, WebRTCTransportError>
                )] = []
            if let result = view.connectResult {
                connect = view.connectWaiters.values.map { ($0, result) }
                view.connectWaiters.removeAll()
            }
            var gather: [CheckedContinuation<Void, Never>] = []
            if view.isGatheringComplete || view.connectResult != nil {
                gather = Array(view.gatherWaiters.values)
                view.gatherWaiters.removeAll()
            }
            var end: [(CheckedContinuation<WebRTCTransportError?, Never>, WebRTCTransportError?)] = []
            if let result = view.endResult {
                end = view.endWaiters.values.map { ($0, result) }
                view.endWaiters.removeAll()
            }
            return (connect, gather, end)
        }
        for (waiter, result) in connectWaiters { waiter.resume(returning: result) }
        for waiter in gatherWaiters { waiter.resume() }
        for (waiter, result) in endWaiters { waiter.resume(returning: result) }
    }

    /// The thread ends: no more commands taken (an event stream still queued is finished), the last figures, every
    /// waiter resumed, the gathering stream finished.
    mutating func finish() {
        let now = ContinuousClock.now
        let finalStats = connection.statsReport(at: now)
        // Stored before the inbox refuses stats requests, so that a refused caller finds it.
        shared.view.withLock { $0.lastStats = finalStats }
        let left = shared.inbox.withLock { inbox in
            inbox.closing = true
            inbox.finished = true
            inbox.frames.removeAll()
            defer { inbox.commands.removeAll() }
            return inbox.commands
        }
        for case .addICEServers(_, _, let events) in left { events.finish() }
        for case .statsReport(let waiter) in left { waiter.resume(returning: finalStats) }
        publish(now: now)
        let (connect, gather, finish, stream, end) = shared.view.withLock { view in
            view.finished = true
            defer {
                view.connectWaiters.removeAll()
                view.gatherWaiters.removeAll()
                view.finishWaiters.removeAll()
                view.endWaiters.removeAll()
                view.gathering = nil
            }
            return (
                Array(view.connectWaiters.values), Array(view.gatherWaiters.values), view.finishWaiters,
                view.gathering, view.endWaiters.values.map { ($0, view.endResult ?? nil) }
            )
        }
        for (waiter, result) in end { waiter.resume(returning: result) }
        let closed = Result<DTLSSRTPKeys, WebRTCTransportError>.failure(
            WebRTCTransportError(.closed, "the transport was closed"))
        for waiter in connect { waiter.resume(returning: closed) }
        for waiter in gather { waiter.resume() }
        stream?.finish()
        for waiter in finish { waiter.resume() }
    }
}
