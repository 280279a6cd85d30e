internal import CaptureCall
internal import CaptureCore
internal import CaptureVP8

/// The preview's one encoder feeding every viewer: an ``EncodedFrameSink`` that hands each encoded frame to the
/// current viewers, in order, on the encoder thread (a viewer's transport queues it for its own driver thread).
///
/// Sharing the encoder is a choice: one capture and one VP8 encode serve any number of viewers (the CPU cost does not
/// grow with them).
///
/// ## Without layer selection
/// Every frame goes to every viewer: one bit rate and one key-frame schedule for all. The session attaches each
/// viewer's transport to the pipeline itself, so a viewer's PLI gives everyone a key frame and the last estimate sets
/// the rate, as a simulcast-less SFU forwarding one uplink would.
///
/// ## With layer selection (a simulcast encoder)
/// Each viewer has a ``ViewerLayerSelector`` and gets the frames of one layer, rewritten as its one stream
/// (`simulcastIndex` 0, and an RTP timestamp that never repeats); it switches at a key frame of its new layer. The
/// viewer's transport is attached to a ``ViewerEncoderControl`` rather than to the pipeline, so its requests come
/// here:
/// - its estimate goes to its selector, and the encoder's target becomes the largest estimate of all viewers (the
///   most demanding viewer's; the encoder's allocator turns on the layers that fits, and each of the others takes
///   the layer its own link carries);
/// - its PLI or FIR asks a key frame of its own layer only (of the layer it is heading for, during a switch);
/// - its congestion frame dropping pauses that viewer alone and moves it a layer down (see
///   ``ViewerLayerSelector/setCongested(_:layers:at:)``); the shared encoder never drops frames for one viewer.
///
/// ## Threading
/// ``consume(_:)`` runs on the encoder thread, the viewers' controls on their driver threads, ``add(_:id:estimateKbps:)``
/// and ``remove(id:)`` on any thread. The viewers and their selectors are behind one lock, held only to compute: frames
/// are handed over, and the encoder is asked for key frames and a target, after it is let go. Applying the target is
/// serialized by a lock of its own, which takes the viewers' lock briefly to read the latest estimates: whichever
/// thread applies last applies the latest maximum. ``consume(_:)`` reuses buffers behind a lock only it takes (so
/// never contended), taking the viewers' lock inside it.
final class ViewerFanout<Viewer: EncodedFrameSink>: EncodedFrameSink {
    /// One viewer: its sink, and its selector when layers are selected.
    struct Entry {
        let viewer: Viewer
        var selector: ViewerLayerSelector?
    }

    /// One viewer's layer as ``layerStates`` shows it.
    struct LayerState: Sendable, Hashable {
        /// The layer the viewer gets (`nil` before its first key frame, or while paused).
        var current: Int?
        /// The layer it switches to at its next key frame.
        var pending: Int?
        /// Its estimate, in kbit/s.
        var estimateKbps: Int
        /// Whether its transport is congested.
        var isPaused: Bool
        /// Its selector's counts.
        var statistics: ViewerLayerSelector.Statistics
    }

    private let entries = Locked<[String: Entry]>([:])
    private let encoder = Locked(WeakLayeredEncoder())
    /// The last target the fan-out asked of the encoder (`nil` before the first); its lock serializes the asking.
    private let sharedTarget = Locked<Int?>(nil)
    /// The selectors' hysteresis, or `nil` to send every frame to every viewer.
    let selection: ViewerLayerSelector.Configuration?
    /// The time for the selectors (a virtual clock in tests).
    let clock: @Sendable () -> ContinuousClock.Instant

    /// Creates a fan-out; with `selection`, each viewer gets one simulcast layer chosen by a selector with that
    /// hysteresis.
    init(
        selection: ViewerLayerSelector.Configuration? = nil,
        clock: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
    ) {
        self.selection = selection
        self.clock = clock
    }

    /// Sets the shared encoder the viewers' requests go to (held weakly: it holds the fan-out as its sink).
    func attach(_ encoder: any LayeredEncoder) {
        self.encoder.withLock { $0.encoder = encoder }
    }

    private var currentEncoder: (any LayeredEncoder)? { encoder.withLock { $0.encoder } }

    /// The layers now, as the selectors take them.
    private func currentLayers(_ encoder: (any LayeredEncoder)?) -> [ViewerLayerSelector.Layer] {
        var layers: [ViewerLayerSelector.Layer] = []
        appendLayers(of: encoder, to: &layers)
        return layers
    }

    /// Appends the layers now, as the selectors take them, to `layers` (which ``consume(_:)`` reuses).
    private func appendLayers(of encoder: (any LayeredEncoder)?, to layers: inout [ViewerLayerSelector.Layer]) {
        guard selection != nil, let encoder else { return }
        for layer in encoder.layers { layers.append(ViewerLayerSelector.Layer(layer)) }
    }

    /// Adds a viewer. Without selection, frames from the next one on reach it. With selection, the encoder's target
    /// is raised to `estimateKbps` if that is the largest estimate, the viewer's selector picks a first layer for it
    /// and a key frame of that layer is asked for: frames reach the viewer from that key frame on.
    func add(_ viewer: Viewer, id: String, estimateKbps: Int) {
        guard let selection else {
            entries.withLock { $0[id] = Entry(viewer: viewer, selector: nil) }
            return
        }
        let selector = ViewerLayerSelector(configuration: selection, estimateKbps: estimateKbps)
        entries.withLock { $0[id] = Entry(viewer: viewer, selector: selector) }
        // The target first: an encoder that turns its layers on at once lets the first pick see them.
        applySharedTarget(reason: .application)
        let encoder = currentEncoder
        let layers = currentLayers(encoder)
        let now = clock()
        let ask = entries.withLock { $0[id]?.selector?.update(layers: layers, at: now) }
        if let ask { encoder?.requestKeyFrame(reason: .application, simulcastIndex: ask) }
    }

    /// Removes a viewer (its transport is closed by the caller); `nil` when there was none. With selection, the
    /// encoder's target follows the viewers left.
    func remove(id: String) -> Viewer? {
        let removed = entries.withLock { $0.removeValue(forKey: id) }
        if removed != nil, selection != nil { applySharedTarget(reason: .application) }
        return removed?.viewer
    }

    /// The viewers now.
    var all: [String: Viewer] { entries.withLock { $0.mapValues(\.viewer) } }

    /// Each viewer's layer, with selection (empty without).
    var layerStates: [String: LayerState] {
        entries.withLock { entries in
            entries.compactMapValues { entry in
                entry.selector.map {
                    LayerState(
                        current: $0.current, pending: $0.pending, estimateKbps: $0.estimateKbps, isPaused: $0.isPaused,
                        statistics: $0.statistics)
                }
            }
        }
    }

    /// The last target the fan-out asked of the encoder, with selection (`nil` before the first viewer).
    var sharedTargetKbps: Int? { sharedTarget.withLock { $0 } }

    // MARK: A viewer's requests (its ViewerEncoderControl)

    /// A viewer's new estimate: its selector takes it, and the encoder's target becomes the largest estimate.
    ///
    /// - Returns: The target asked of the encoder, in kbit/s (`kbps` for an unknown viewer or without selection).
    func setEstimate(_ kbps: Int, reason: BitrateChangeReason, viewer id: String) -> Int {
        guard selection != nil else { return kbps }
        let encoder = currentEncoder
        let layers = currentLayers(encoder)
        let now = clock()
        let ask = entries.withLock { $0[id]?.selector?.setEstimate(kbps, layers: layers, at: now) }
        if let ask { encoder?.requestKeyFrame(reason: .application, simulcastIndex: ask) }
        return applySharedTarget(reason: reason) ?? kbps
    }

    /// A viewer asked for a key frame: of its own layer (every layer without selection).
    func keyFrameWanted(reason: KeyFrameRequestReason, viewer id: String) {
        let encoder = currentEncoder
        guard selection != nil else {
            encoder?.requestKeyFrame(reason: reason, simulcastIndex: nil)
            return
        }
        let now = clock()
        guard let layer = entries.withLock({ $0[id]?.selector?.keyFrameWanted(at: now) }) else { return }
        encoder?.requestKeyFrame(reason: reason, simulcastIndex: layer)
    }

    /// A viewer's transport is congested, or no longer: with selection, that viewer pauses and moves down (the
    /// encoder goes on for the others); without, the encoder drops frames, as before.
    func setCongested(_ congested: Bool, viewer id: String) {
        let encoder = currentEncoder
        guard selection != nil else {
            encoder?.setCongestionFrameDropping(congested)
            return
        }
        let layers = currentLayers(encoder)
        let now = clock()
        let ask = entries.withLock { $0[id]?.selector?.setCongested(congested, layers: layers, at: now) }
        if let ask { encoder?.requestKeyFrame(reason: .application, simulcastIndex: ask) }
    }

    /// Asks the encoder for the largest estimate of the viewers (nothing without viewers).
    ///
    /// - Returns: The target asked, if any.
    @discardableResult
    private func applySharedTarget(reason: BitrateChangeReason) -> Int? {
        sharedTarget.withLock { asked -> Int? in
            guard let encoder = currentEncoder else { return nil }
            let largest = entries.withLock { entries in
                entries.values.lazy.compactMap { $0.selector?.estimateKbps }.max()
            }
            guard let largest else { return asked }
            let range = encoder.bitrateRange
            let target = min(max(largest, range.lowerBound), range.upperBound)
            guard target != asked else { return target }
            asked = target
            encoder.setTargetBitrate(kbps: target, reason: reason)
            return target
        }
    }

    // MARK: EncodedFrameSink

    /// Buffers ``consume(_:)`` reuses, so that a frame allocates nothing once they have grown. Only the encoder
    /// thread uses them: the lock is never contended, and makes that sharing checkable.
    private struct Scratch {
        var layers: [ViewerLayerSelector.Layer] = []
        var viewers: [Viewer] = []
        var deliveries: [(viewer: Viewer, rtpTimestamp: UInt32)] = []
    }

    private let scratch = Locked(Scratch())

    /// Hands the frame to every viewer, or with selection to the viewers whose selector forwards it (as their one
    /// stream), asking the encoder for the key frames the selectors want. Allocates nothing once its buffers have
    /// grown to the viewers and layers there are.
    func consume(_ frame: EncodedFrame) {
        scratch.withLock { scratch in
            guard selection != nil else {
                entries.withLock { entries in
                    for entry in entries.values { scratch.viewers.append(entry.viewer) }
                }
                for viewer in scratch.viewers { viewer.consume(frame) }
                scratch.viewers.removeAll(keepingCapacity: true)
                return
            }
            let encoder = currentEncoder
            appendLayers(of: encoder, to: &scratch.layers)
            let now = clock()
            var asks: UInt32 = 0
            entries.withLock { entries in
                for index in entries.indices {
                    guard
                        let decision = entries.values[index].selector?.frame(
                            simulcastIndex: frame.simulcastIndex, isKeyFrame: frame.isKeyFrame,
                            rtpTimestamp: frame.rtpTimestamp, layers: scratch.layers, at: now)
                    else { continue }
                    if let ask = decision.keyFrameRequest, (0..<32).contains(ask) { asks |= 1 << UInt32(ask) }
                    if decision.forward {
                        scratch.deliveries.append((entries.values[index].viewer, decision.rtpTimestamp))
                    }
                }
            }
            scratch.layers.removeAll(keepingCapacity: true)
            var layer = 0
            while asks != 0 {
                if asks & 1 != 0 { encoder?.requestKeyFrame(reason: .application, simulcastIndex: layer) }
                asks >>= 1
                layer += 1
            }
            for delivery in scratch.deliveries {
                var forwarded = frame
                forwarded.simulcastIndex = 0
                forwarded.rtpTimestamp = delivery.rtpTimestamp
                delivery.viewer.consume(forwarded)
            }
            scratch.deliveries.removeAll(keepingCapacity: true)
        }
    }

    func finish() {
        for viewer in entries.withLock({ $0.values.map(\.viewer) }) { viewer.finish() }
    }
}
