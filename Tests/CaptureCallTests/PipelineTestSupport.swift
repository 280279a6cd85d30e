import CaptureCall
import CaptureCore
import CaptureVP8
import Foundation

/// A sink that keeps every frame, counts `finish()` calls and measures capture → sink latency.
final class RecordingSink: EncodedFrameSink {
    struct Recorded {
        var frames: [EncodedFrame] = []
        var latenciesNs: [UInt64] = []
        var finishCount = 0
        var framesAfterFinish = 0
    }

    let recorded = Locked(Recorded())

    func consume(_ frame: EncodedFrame) {
        let now = MonotonicClock.nowNs()
        recorded.withLock {
            if $0.finishCount > 0 { $0.framesAfterFinish += 1 }
            $0.frames.append(frame)
            $0.latenciesNs.append(now >= frame.captureTimeNs ? now - frame.captureTimeNs : 0)
        }
    }

    func finish() { recorded.withLock { $0.finishCount += 1 } }

    var frames: [EncodedFrame] { recorded.withLock { $0.frames } }
    var count: Int { recorded.withLock { $0.frames.count } }
}

/// A capturer delegate that counts frames (a second consumer at the camera's rate) and forwards them.
final class CountingTee: CameraVideoCapturerDelegate {
    let next: any CameraVideoCapturerDelegate
    let counted = Locked(0)

    init(_ next: any CameraVideoCapturerDelegate) { self.next = next }

    func capturer(_ capturer: CameraVideoCapturer, didCapture frame: VideoFrame) {
        counted.withLock { $0 += 1 }
        next.capturer(capturer, didCapture: frame)
    }

    var count: Int { counted.withLock { $0 } }
}

enum PipelineFixtures {
    static let qvga = Dimensions(width: 320, height: 240)

    /// An I420 frame: dark, with a bright block in the top-left quadrant, and a gradient so it is not trivial.
    static func markedFrame(_ size: Dimensions, index: Int, rotation: VideoRotation = .degrees0) -> VideoFrame {
        let buffer = VideoFrameBuffer(format: .i420, width: size.width, height: size.height)
        for plane in 0..<3 {
            let layout = buffer.planes[plane]
            let base = buffer.mutablePlane(plane)
            for row in 0..<layout.rows {
                for col in 0..<layout.rowBytes {
                    let value: UInt8
                    if plane == 0 {
                        let bright = row < layout.rows / 2 && col < layout.rowBytes / 2
                        value = bright ? 220 : UInt8(16 + (row + col + index) % 24)
                    } else {
                        value = 128
                    }
                    base[row * layout.stride + col] = value
                }
            }
        }
        return VideoFrame(
            buffer: buffer, rotation: rotation, timestampNs: UInt64(index + 1) * 33_333_333,
            sequenceNumber: UInt64(index))
    }

    /// Mean luma of each quadrant: top-left, top-right, bottom-left, bottom-right.
    static func quadrantMeans(_ buffer: VideoFrameBuffer) -> [Double] {
        let (y, _, _) = buffer.packedI420Planes()
        let (w, h) = (buffer.width, buffer.height)
        var sums = [Double](repeating: 0, count: 4)
        var counts = [Double](repeating: 0, count: 4)
        for row in 0..<h {
            for col in 0..<w {
                let quadrant = (row < h / 2 ? 0 : 2) + (col < w / 2 ? 0 : 1)
                sums[quadrant] += Double(y[row * w + col])
                counts[quadrant] += 1
            }
        }
        return zip(sums, counts).map { $0 / max(1, $1) }
    }

    /// Waits (polling, up to `timeout`) until `condition` holds; returns whether it did.
    static func wait(
        timeout: Duration = .seconds(20), until condition: () -> Bool
    ) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    /// A percentile of `values` (nearest rank).
    static func percentile(_ values: [UInt64], _ p: Double) -> UInt64 {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let rank = min(sorted.count - 1, max(0, Int((p * Double(sorted.count)).rounded(.up)) - 1))
        return sorted[rank]
    }
}
