public import CaptureCore

extension CameraProvider {
    /// The system's cameras: the V4L2 devices, with the synthetic camera listed only when there is none.
    public static var system: CameraProvider {
        CameraProvider(backends: [V4L2Backend(), SyntheticBackend()], syntheticOnlyAsFallback: true)
    }
}
