import CaptureCore
import CaptureTestSupport
import CaptureVP8
import Foundation
import Testing

/// Inputs the `ivf` fuzz target found (Fixtures/fuzz/regressions/).
@Suite("IVF fuzz regressions")
struct IVFFuzzRegressionTests {
    /// The process's peak resident memory (VmHWM) in bytes.
    static func peakResidentBytes() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        let kilobytes = try #require(Int(line.split(separator: " ").dropFirst().first ?? ""))
        return kilobytes * 1024
    }

    @Test("a 50-byte file whose frame header declares 256 MB is malformed and costs no 256 MB buffer")
    func frameDeclaringHugeSize() throws {
        let path = Fixtures.url("fuzz/regressions/ivf-frame-declares-256mb").path
        // Reset the peak (Linux ≥ 4.0: writing 5 to clear_refs resets VmHWM) so the read's own peak shows.
        try "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        let before = try Self.peakResidentBytes()
        let reader = try IVFReader(path: path)
        #expect(throws: CaptureError.self) { _ = try reader.readAll() }
        let grown = try Self.peakResidentBytes() - before
        #expect(grown < 64 << 20, "reading the truncated frame raised peak memory by \(grown >> 20) MB")
    }
}
