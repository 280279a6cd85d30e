import CaptureCore

/// A running capture through ``CameraVideoCapturer`` on a resolved device, as `capture` and `snapshot` use it.
struct CaptureRun {
    let capturer: CameraVideoCapturer
    /// The frames, when asked for at start.
    let frames: VideoFrameStream?
    let configuration: CaptureConfiguration
    let selection: FormatSelection

    /// Picks the format with the capturer's rules and starts capturing.
    static func start(
        on resolved: ResolvedDevice, request: RequestOptions, output: OutputPixelFormat = .nv12, paced: Bool = true,
        orientation: DeviceOrientation = .unknown, delegate: (any CameraVideoCapturerDelegate)? = nil,
        stream: Bool = false
    ) async throws -> CaptureRun {
        let selection = try request.select(on: resolved)
        let capturer = CameraVideoCapturer(provider: resolved.provider)
        capturer.outputPixelFormat = output
        capturer.isPaced = paced
        capturer.deviceOrientation = orientation
        capturer.delegate = delegate
        let frames = stream ? capturer.frames(bufferingNewest: 2) : nil
        let configuration = try await capturer.startCapture(
            device: resolved.device, format: selection.format, fps: selection.fps, dimensions: selection.dimensions)
        return CaptureRun(capturer: capturer, frames: frames, configuration: configuration, selection: selection)
    }

    /// Stops capturing; rethrows the error that ended the capture early, if one did.
    func stop() async throws {
        let failure: CaptureError? = if case .failed(let error) = capturer.captureState { error } else { nil }
        await capturer.stopCapture()
        if let failure { throw failure }
    }

    /// Stops capturing, then runs `finish` (whatever the capture's end), then rethrows the error that ended the capture
    /// early, if one did; otherwise returns what `finish` returned. An error `finish` throws comes first.
    func stop<T>(then finish: () async throws -> T) async throws -> T {
        let stopError: (any Error)?
        do { try await stop(); stopError = nil } catch { stopError = error }
        let result = try await finish()
        if let stopError { throw stopError }
        return result
    }
}
