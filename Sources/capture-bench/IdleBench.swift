import CaptureCall
import CaptureCore
import CaptureRTP
import CaptureWebRTC
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What idle WebRTC connections cost: `--pairs N` pairs of our own connections over loopback (one controlling, as a
/// publisher or a preview viewer's server side is; one controlled), each connected (ICE and DTLS) with a media sender
/// attached that sends nothing, then left idle for `--seconds S`. Prints the process's threads, the context switches
/// of all its threads (wake-ups) and its CPU time over that window, in total and per connection.
struct IdleBench {
    let pairs: Int
    let seconds: Int

    init(_ options: BenchOptions) throws(CaptureError) {
        pairs = try options.int("pairs", default: 1)
        seconds = try options.int("seconds", default: 10)
    }

    func run() async throws {
        var held: [IdleConnectionPair] = []
        for _ in 0..<pairs { held.append(try await IdleConnectionPair.connect()) }
        // Let the handshakes' last retransmissions and the first reports settle.
        try await Task.sleep(for: .seconds(1))
        let before = ProcessWakeups.read()
        let cpuBefore = ProcessWakeups.cpuSeconds()
        try await Task.sleep(for: .seconds(seconds))
        let after = ProcessWakeups.read()
        let cpu = ProcessWakeups.cpuSeconds() - cpuBefore
        let switches = after.switches - before.switches
        let connections = 2 * pairs
        let perSecond = Double(switches) / Double(seconds)
        print(
            "pairs=\(pairs) connections=\(connections) seconds=\(seconds) threads=\(after.threads)"
                + " switches=\(switches) wakeups_per_s=\(String(format: "%.1f", perSecond))"
                + " wakeups_per_s_per_connection=\(String(format: "%.1f", perSecond / Double(connections)))"
                + " cpu_ms=\(String(format: "%.1f", cpu * 1_000))"
                + " cpu_ms_per_connection_per_min=\(String(format: "%.2f", cpu * 1_000 / Double(connections) * 60 / Double(seconds)))"
        )
        for pair in held { await pair.close() }
    }
}

/// The process's threads and the context switches (voluntary and not) of all of them, from /proc/self/task.
enum ProcessWakeups {
    static func read() -> (threads: Int, switches: Int) {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        var switches = 0
        for task in tasks {
            guard let status = try? String(contentsOfFile: "/proc/self/task/\(task)/status", encoding: .utf8) else {
                continue
            }
            for line in status.split(separator: "\n")
            where line.hasPrefix("voluntary_ctxt_switches") || line.hasPrefix("nonvoluntary_ctxt_switches") {
                switches += Int(line.split(separator: "\t").last.map(String.init) ?? "") ?? 0
            }
        }
        return (tasks.count, switches)
    }

    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
            + Double(usage.ru_stime.tv_usec) / 1e6
    }
}
