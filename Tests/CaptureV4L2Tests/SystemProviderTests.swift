import CaptureCore
import Testing

@testable import CaptureV4L2

/// `CameraProvider.system`: V4L2 first, the synthetic camera only as a fallback.
@Suite("V4L2 system provider")
struct SystemProviderTests {
    @Test("the system provider has the V4L2 backend, then the synthetic one, used only as a fallback")
    func composition() {
        let provider = CameraProvider.system
        #expect(provider.backends.map(\.kind) == [.v4l2, .synthetic])
        #expect(provider.syntheticOnlyAsFallback)
    }

    @Test(
        "with no V4L2 device, the system provider lists the synthetic camera",
        .enabled(if: V4L2Backend.listNodes().isEmpty, "this machine has /dev/video* nodes"))
    func fallback() {
        let devices = CameraProvider.system.devices()
        #expect(!devices.isEmpty)
        #expect(devices.allSatisfy { $0.kind == .synthetic })
    }
}
