import CaptureCore
import Dispatch
import Glibc

/// Set by SIGINT or SIGTERM, so that `publish` ends its session (DELETE) and `preview` its viewers instead of dying with it open.
final class InterruptFlag: Sendable {
    private let flag = Locked(false)

    var isSet: Bool { flag.withLock { $0 } }

    /// Watches `signals` (ignoring their default action) until the returned sources are cancelled.
    func watch(_ signals: [Int32]) -> [any DispatchSourceSignal] {
        signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [flag] in flag.withLock { $0 = true } }
            source.resume()
            return source
        }
    }
}
