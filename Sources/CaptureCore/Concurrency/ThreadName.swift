internal import CLinuxIO

/// Names the calling thread as the system lists it (`top -H`, `perf`, gdb, `/proc/<pid>/task/*/comm`).
///
/// Call it first thing in a thread's body. A Linux thread starts with its creator's name (often a cooperative pool
/// thread's), and Foundation applies a `Thread.name` set before `start()` to the system's thread only if `start()` has
/// returned by the time the thread looks: a race the thread wins often enough to leave pool names on our threads.
/// The system keeps at most 15 bytes; a longer name is cut at a character boundary.
package func nameCurrentThread(_ name: String) {
    var cut = Substring(name)
    while cut.utf8.count > 15 { cut.removeLast() }
    _ = clinuxio_name_this_thread(String(cut))
}
