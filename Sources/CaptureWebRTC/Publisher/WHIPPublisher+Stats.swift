internal import CaptureCall
internal import CaptureCore

extension WHIPPublisher {
    /// The publication's statistics in W3C webrtc-stats' names and shapes, as a browser's `getStats()` gives them:
    /// the transport's report (``WebRTCTransport/statsReport()``) with the encoder's fields of `outbound-rtp` filled
    /// from the send pipeline (`framesEncoded`, `frameWidth`, `frameHeight`, `totalEncodeTime`,
    /// `encoderImplementation`, `qualityLimitationReason`, `qualityLimitationDurations`,
    /// `qualityLimitationResolutionChanges`, and `targetBitrate` as the encoder has it). `nil` before ``start()`` made a transport.
    public func statsReport() async -> WebRTCStatsReport? {
        let (transport, pipeline) = state.withLock { ($0.transport, $0.pipeline) }
        guard let transport else { return nil }
        var report = await transport.statsReport()
        if let encoded = pipeline?.statistics, report.outboundRTP != nil {
            report.outboundRTP?.framesEncoded = encoded.framesEncoded
            report.outboundRTP?.frameWidth = encoded.currentOutputSize.map { Int($0.width) }
            report.outboundRTP?.frameHeight = encoded.currentOutputSize.map { Int($0.height) }
            report.outboundRTP?.totalEncodeTime = encoded.totalEncodeTime
            report.outboundRTP?.encoderImplementation = "libvpx"
            report.outboundRTP?.qualityLimitationReason = encoded.qualityLimitationReason.rawValue
            report.outboundRTP?.qualityLimitationDurations = Dictionary(
                uniqueKeysWithValues: encoded.qualityLimitationDurations.map { ($0.key.rawValue, $0.value) })
            report.outboundRTP?.qualityLimitationResolutionChanges = encoded.qualityLimitationResolutionChanges
            if encoded.currentTargetKbps > 0 {
                report.outboundRTP?.targetBitrate = Double(encoded.currentTargetKbps) * 1_000
            }
            // With simulcast, each encoding's own figures: layer 0 in outboundRTP, the others by their index.
            if !report.simulcastLayers.isEmpty, let first = encoded.layers.first {
                Self.fill(&report.outboundRTP, from: first)
                for position in report.simulcastLayers.indices {
                    let index = report.simulcastLayers[position].encodingIndex ?? position + 1
                    guard let layer = encoded.layers.first(where: { $0.index == index }) else { continue }
                    var outbound: RTCOutboundRTPStreamStats? = report.simulcastLayers[position]
                    Self.fill(&outbound, from: layer)
                    outbound?.encoderImplementation = "libvpx"
                    if let outbound { report.simulcastLayers[position] = outbound }
                }
            }
        }
        return report
    }

    /// One simulcast layer's encoder figures in its `outbound-rtp`.
    private static func fill(_ outbound: inout RTCOutboundRTPStreamStats?, from layer: SimulcastLayerStatistics) {
        outbound?.framesEncoded = layer.framesEncoded
        outbound?.frameWidth = layer.dimensions.width
        outbound?.frameHeight = layer.dimensions.height
        outbound?.targetBitrate = Double(layer.targetKbps) * 1_000
    }
}
