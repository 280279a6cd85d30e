import CaptureCore
import CaptureFileCameras

extension FuzzTarget {
    /// The Y4M reader: the header line, then every frame (`FRAME` lines with parameters, truncated frames), then a
    /// rewind and one more frame.
    static let y4m = FuzzTarget(name: "y4m") { bytes in
        _ = try? Y4MHeader.parse(Array(bytes))
        FuzzInputFile.withFile(containing: bytes) { path in
            guard let reader = try? Y4MReader(path: path) else { return }
            defer { reader.close() }
            while (try? reader.readFrame()) == true {}
            guard (try? reader.rewind()) != nil else { return }
            reader.resetCount()
            _ = try? reader.readFrame()
        }
    }
}
