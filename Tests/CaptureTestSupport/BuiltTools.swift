import Foundation

/// The package's own executables, as the build left them, for tests that run them.
package enum BuiltTools {
    /// `capturer-probe`: next to the test bundle (`.build/<config>/`), else in the package's `.build/debug`, else (in
    /// the vivid guest) `/usr/local/bin`; `nil` when it was not built.
    package static let capturerProbe: URL? = {
        var candidates: [URL] = []
        let bundle = Bundle.main.bundleURL
        candidates.append(bundle.appendingPathComponent("capturer-probe"))
        candidates.append(bundle.deletingLastPathComponent().appendingPathComponent("capturer-probe"))
        if let argument = CommandLine.arguments.first {
            candidates.append(
                URL(fileURLWithPath: argument).deletingLastPathComponent().appendingPathComponent("capturer-probe"))
        }
        candidates.append(Fixtures.packageRoot.appendingPathComponent(".build/debug/capturer-probe"))
        // Where Scripts/test-vivid installs it in the vivid guest.
        candidates.append(URL(fileURLWithPath: "/usr/local/bin/capturer-probe"))
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()
}
