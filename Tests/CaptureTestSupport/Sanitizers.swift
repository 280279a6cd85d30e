#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Which sanitizer runtime this test process carries (the built executables it spawns carry the same, since
/// `swift test --sanitize=…` builds them together).
public enum Sanitizers {
    /// Whether AddressSanitizer's runtime is loaded (its `__asan_init` symbol resolves). Under it, freed memory sits
    /// in a quarantine (256 MiB by default) and every allocation has redzones, so resident-memory figures measure
    /// the sanitizer rather than the code: memory-growth tests skip themselves, saying so.
    public static let addressSanitizerIsActive: Bool =
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil

    /// Whether ThreadSanitizer's runtime is loaded (`__tsan_init` resolves). Under it code runs tens of times slower,
    /// so what still runs on the real clock (OpenSSL's DTLS timers) moves a virtual-time simulation's instants.
    public static let threadSanitizerIsActive: Bool =
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil
}
