import CaptureVP8

extension FuzzTarget {
    /// The IVF reader: the file header, then every frame header and frame.
    static let ivf = FuzzTarget(name: "ivf") { bytes in
        FuzzInputFile.withFile(containing: bytes) { path in
            guard let reader = try? IVFReader(path: path) else { return }
            while (try? reader.next()) != nil {}
        }
    }
}
