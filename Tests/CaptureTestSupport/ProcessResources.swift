import Foundation

/// What the test process holds from the kernel: open descriptors, memory mappings and threads, read from `/proc/self`.
/// Churn tests take one before and after a run and expect the process to come back to where it started; any other test
/// in the process moves these counts, so they count in a process of their own (an exit test) or alone in the vivid guest.
package struct ProcessResources: Sendable, Hashable, CustomStringConvertible {
    /// Entries in `/proc/self/fd`.
    package var descriptors: Int
    /// Lines in `/proc/self/maps`.
    package var mappings: Int
    /// Entries in `/proc/self/task`.
    package var threads: Int

    /// The counts now.
    /// The names of the process's threads as the system lists them, sorted (for a message when counts differ).
    package static func threadNames() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .newlines)
        }.sorted()
    }

    package static func now() -> ProcessResources {
        let fileManager = FileManager.default
        let descriptors = (try? fileManager.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
        let threads = (try? fileManager.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1
        let maps = (try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8)) ?? ""
        return ProcessResources(
            descriptors: descriptors, mappings: maps.split(separator: "\n").count, threads: threads)
    }

    /// How many more mappings than the baseline still count as "back where it started". glibc serves each large
    /// allocation (a frame buffer is above its mmap threshold) with a mapping of its own and merges or splits
    /// neighbouring ones, so the count moves by one or two with whatever happens to be allocated at the moment of
    /// reading (seen: +1 after 100 vivid cycles, +2 after 500 synthetic ones). Larger steps were seen too (+6 after
    /// 500 synthetic cycles in a CI dry run, with a thread fewer than at the baseline), likely malloc arenas: a thread
    /// that allocates while the others' arenas are busy gets one of its own (two mappings, at most 8 per core, kept).
    /// Bounded either way, where a leak per cycle would add hundreds.
    package static let mappingSlack = 8

    /// Whether descriptors and threads are at most `baseline`'s and mappings at most ``mappingSlack`` above it.
    package func isWithin(_ baseline: ProcessResources) -> Bool {
        descriptors <= baseline.descriptors && mappings <= baseline.mappings + Self.mappingSlack
            && threads <= baseline.threads
    }

    /// Waits (up to `seconds`, polling) for the counts to come back within `baseline` — threads that were told to
    /// finish may take a moment to exit — and returns the last counts seen.
    package static func settle(to baseline: ProcessResources, seconds: Double = 10) async -> ProcessResources {
        var current = now()
        let deadline = Date().addingTimeInterval(seconds)
        while !current.isWithin(baseline), Date() < deadline {
            try? await Task.sleep(for: .milliseconds(50))
            current = now()
        }
        return current
    }

    /// `fd N, maps N, threads N`.
    package var description: String { "fd \(descriptors), maps \(mappings), threads \(threads)" }
}
