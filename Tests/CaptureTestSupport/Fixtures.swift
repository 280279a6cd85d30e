import Foundation

/// The files under `Fixtures/` at the package root (recorded format lists, malformed dumps, media).
public enum Fixtures {
    /// The package root, found from this file's path (`Tests/CaptureTestSupport/Fixtures.swift`).
    public static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    /// The URL of a fixture, by its path under `Fixtures/`, for example `"devices/vivid.txt"`.
    public static func url(_ name: String) -> URL {
        packageRoot.appendingPathComponent("Fixtures").appendingPathComponent(name)
    }

    /// The text of a fixture (UTF-8).
    public static func text(_ name: String) throws -> String {
        try String(contentsOf: url(name), encoding: .utf8)
    }

    /// The file names in a fixture folder (for example `"devices"`), sorted; folders are left out.
    public static func files(in folder: String) throws -> [String] {
        let directory = url(folder)
        return try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { name in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(
                atPath: directory.appendingPathComponent(name).path, isDirectory: &isDirectory)
                && !isDirectory.boolValue
        }.sorted()
    }
}
