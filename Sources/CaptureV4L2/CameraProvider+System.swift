public import CaptureCore

extension CameraProvider {
    /// The system's cameras: the V4L2 devices, with the synthetic camera listed only when there is none.
    public static var system: CameraProvider {
        // TODO: add the synthetic backend (`SyntheticBackend`, being written on `main`) once it lands:
        // CameraProvider(backends: [V4L2Backend(), SyntheticBackend()], syntheticOnlyAsFallback: true)
        CameraProvider(backends: [V4L2Backend()], syntheticOnlyAsFallback: true)
    }
}
