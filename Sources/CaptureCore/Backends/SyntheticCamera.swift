/// The built-in synthetic camera: a moving test pattern with a frame counter, offered in the sizes and rates of a
/// typical webcam. It is the default device when no real camera exists (like Chrome's fake capture device).
public enum SyntheticCamera {
    /// The device id of the synthetic camera at `position`: `synthetic` for the default front camera,
    /// `synthetic:<position>` otherwise.
    public static func id(position: CameraPosition) -> String {
        position == .front ? "synthetic" : "synthetic:\(position.rawValue)"
    }

    /// Sizes offered, as a webcam would: 320x240 up to 1920x1080.
    public static let sizes: [Dimensions] = [
        Dimensions(width: 320, height: 240), Dimensions(width: 640, height: 360), Dimensions(width: 640, height: 480),
        Dimensions(width: 960, height: 540), Dimensions(width: 1280, height: 720),
        Dimensions(width: 1920, height: 1080),
    ]

    /// The device description of the synthetic camera facing `position`.
    public static func device(position: CameraPosition = .front) -> CaptureDevice {
        let pixelFormats = [
            PixelFormatDescription(pixelFormat: .nv12, description: "Y/UV 4:2:0"),
            PixelFormatDescription(pixelFormat: .yu12, description: "Planar YUV 4:2:0"),
        ]
        var formats: [CaptureFormat] = []
        for pixelFormat in pixelFormats.map(\.pixelFormat) {
            for size in sizes {
                let rates: [UInt32] = size.height >= 1080 ? [30, 15] : [60, 30, 15]
                formats.append(CaptureFormat(pixelFormat, size.width, size.height, fps: rates))
            }
        }
        return CaptureDevice(
            id: id(position: position), name: "Synthetic camera (\(position.rawValue))", kind: .synthetic,
            position: position, driver: "synthetic", pixelFormats: pixelFormats, formats: formats)
    }
}

/// The backend serving the synthetic camera.
package struct SyntheticBackend: CameraBackend {
    package let position: CameraPosition

    package init(position: CameraPosition = .front) { self.position = position }

    package var kind: CaptureDevice.Kind { .synthetic }

    package func devices() -> [CaptureDevice] { [SyntheticCamera.device(position: position)] }

    /// Frames are synthesised in the output layout, whatever the listed pixel format.
    package func canConvert(_ pixelFormat: PixelFormat) -> Bool { true }

    package func makeSession(
        _ configuration: CaptureSessionConfiguration, events: CaptureSessionEvents
    ) throws(CaptureError) -> any CaptureSession {
        try SyntheticSession(configuration: configuration, events: events)
    }
}

extension CameraProvider {
    /// The synthetic camera only, facing front.
    public static let builtIn = CameraProvider(backends: [SyntheticBackend()])

    /// The synthetic camera facing `position`.
    public static func synthetic(position: CameraPosition) -> CameraProvider {
        CameraProvider(backends: [SyntheticBackend(position: position)])
    }
}
