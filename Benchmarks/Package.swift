// swift-tools-version:6.1
import PackageDescription

// Micro-benchmarks of the hot paths (conversion, VP8 encode, RTP packetizing, SRTP protect) on package-benchmark, with
// checked-in thresholds of heap allocations per frame or packet (Thresholds/), as swift-nio does. A package of its own,
// depending on the library by path, so that package-benchmark and its dependencies build only when benchmarks run
// (Scripts/benchmarks/micro), not in CI's three builds of the library (debug, ASan, TSan).
let package = Package(
    name: "benchmarks",
    dependencies: [
        .package(name: "swift-camera-capture", path: "../"),
        // package-benchmark (ordo-one/benchmark): allocation counts (mallocCountTotal) through malloc-interposer, which
        // the library's capture-bench already uses, plus wall clock. Only the MallocInterposer trait: the default
        // RuntimeInterposer (ARC counts on Linux with Swift 6.3) would need swift-runtime-interposer, which we do not
        // use and do not build.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "CaptureBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "CaptureCore", package: "swift-camera-capture"),
                .product(name: "CaptureConversion", package: "swift-camera-capture"),
                .product(name: "CaptureVP8", package: "swift-camera-capture"),
                .product(name: "CaptureRTP", package: "swift-camera-capture"),
                .product(name: "CaptureCongestion", package: "swift-camera-capture"),
            ],
            path: "Benchmarks/CaptureBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    ],
    swiftLanguageModes: [.v6]
)
