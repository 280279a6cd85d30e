// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "swift-camera-capture",
    products: [
        .library(name: "CaptureCore", targets: ["CaptureCore"]),
        .library(name: "CaptureV4L2", targets: ["CaptureV4L2"]),
        .library(name: "CaptureConversion", targets: ["CaptureConversion"]),
        .library(name: "CaptureFileCameras", targets: ["CaptureFileCameras"]),
        .library(name: "CaptureVP8", targets: ["CaptureVP8"]),
        .library(name: "CaptureNet", targets: ["CaptureNet"]),
        .library(name: "CaptureRTP", targets: ["CaptureRTP"]),
        .library(name: "CaptureCongestion", targets: ["CaptureCongestion"]),
        .library(name: "CaptureICE", targets: ["CaptureICE"]),
        .library(name: "CaptureDTLS", targets: ["CaptureDTLS"]),
        .library(name: "CaptureCall", targets: ["CaptureCall"]),
        .library(name: "CaptureWebRTC", targets: ["CaptureWebRTC"]),
        .library(name: "CapturePreview", targets: ["CapturePreview"]),
        .executable(name: "capturer-probe", targets: ["capturer-probe"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        // Capture/encode statistics an app can export (a no-op until the app bootstraps a backend).
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        // Latency as a distribution (p50…p99.9, max) recorded without allocating per sample.
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        // HTTP/1.1 on an event loop (NIOCore, NIOPosix, NIOHTTP1): the preview server's page and WHEP endpoint
        // (CapturePreview), and the WHIP client's requests (CaptureWebRTC: our own small client on NIOHTTP1's codec,
        // its TLS a handler of ours on the system's OpenSSL, CSSL). The codec the rest of the server-side Swift
        // ecosystem is built on, without a web framework's or an HTTP client library's build time: CI builds the
        // package three times (plain, ASan, TSan). AsyncHTTPClient, the WHIP client's HTTP until then, built
        // swift-nio-ssl (BoringSSL from source, some 430 C files), swift-nio-http2, swift-nio-extras, swift-algorithms,
        // swift-configuration, swift-distributed-tracing and swift-service-context for one file: a clean debug build
        // with tests took 1,929 steps and 713 s of CPU with it (16 packages resolved); with our own client it takes
        // 1,214 steps and 441 s (10 packages; on a shared 2-core machine), in each of CI's three builds.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // Benchmarks only: counts heap allocations (capture-bench, loaded with LD_PRELOAD by Scripts/bench).
        .package(url: "https://github.com/ordo-one/malloc-interposer", from: "1.6.1"),
    ],
    targets: [
        // System libraries: header-only shims for what Swift cannot import (variadic calls, macro constants).
        .systemLibrary(name: "CV4L2", pkgConfig: "libv4l2", providers: [.apt(["libv4l-dev"])]),
        .systemLibrary(name: "CYUV", providers: [.apt(["libyuv-dev"])]),
        // TurboJPEG (libjpeg-turbo): MJPEG decoding with one decompressor kept per stream.
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CVPX", pkgConfig: "vpx", providers: [.apt(["libvpx-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CSRTP", pkgConfig: "libsrtp2", providers: [.apt(["libsrtp2-dev"])]),
        // OpenSSL: DTLS 1.2 with use_srtp, ECDSA certificates, HMAC-SHA1 for STUN's MESSAGE-INTEGRITY; AES-128
        // (CTR, GCM) and SHA-1 for the SRTP sender's transform; TLS 1.2/1.3 with certificate verification for the
        // WHIP client's `https:`.
        .systemLibrary(name: "CSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        // Linux calls declared only under _GNU_SOURCE: ppoll and pipe2 for the connection driver's wait and wake-up,
        // pthread_setname_np for the blocking executor's thread names.
        .systemLibrary(name: "CLinuxIO", path: "Sources/CLinuxIO"),
        // libFuzzer's driver entry, declared for capture-fuzz (linked only by its -sanitize=fuzzer build).
        .systemLibrary(name: "CLibFuzzer", path: "Sources/CLibFuzzer"),

        // Core: the model, selection and rotation rules, the capturer, the synthetic camera.
        .target(
            name: "CaptureCore",
            dependencies: [
                "CLinuxIO",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // Conversion: camera pixel formats to NV12/I420, rotation, scaling (libyuv); MJPEG decoding (TurboJPEG).
        .target(name: "CaptureConversion", dependencies: ["CaptureCore", "CYUV", "CTurboJPEG"]),
        // File cameras: the `v4l2-ctl` text formats (--list-formats-ext, --list-ctrls-menus), parsed and rendered,
        // recorded devices built from them, Y4M files, and raw-frame replay. CaptureCore: the model and the backend
        // contract they plug into; CaptureConversion: the replay camera converts (and decodes MJPEG) as V4L2 frames
        // are; SystemPackage: files are read with FileDescriptor, FilePath names them, failures carry an Errno.
        .target(
            name: "CaptureFileCameras",
            dependencies: [
                "CaptureCore", "CaptureConversion", .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // V4L2 backend: real cameras through libv4l2.
        .target(
            name: "CaptureV4L2",
            dependencies: [
                "CaptureCore", "CaptureConversion", "CV4L2",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // VP8: libvpx encoder in WebRTC's real-time configuration, decoder, IVF.
        .target(
            name: "CaptureVP8",
            dependencies: [
                "CaptureCore", "CaptureConversion", "CVPX",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        // Net: UDP sockets, socket addresses, name resolution (getaddrinfo) and the interfaces' addresses, and the
        // driver's wait (ppoll) and wake-up (a self-pipe); no protocol above UDP. CaptureCore for `Locked` (the socket's
        // lock: a pthread mutex ThreadSanitizer sees); SystemPackage: socket failures carry an Errno; CLinuxIO: ppoll
        // and pipe2, which Glibc's module does not export.
        .target(
            name: "CaptureNet",
            dependencies: ["CaptureCore", "CLinuxIO", .product(name: "SystemPackage", package: "swift-system")]
        ),
        // The call layer's wire formats: RTP/VP8 payload, RTCP, SDP, SRTP; no sockets (CaptureNet). SRTP: the sender
        // protects with our own transform on OpenSSL's libcrypto (CSSL: AES-CTR, AES-GCM, SHA-1; no allocation per
        // packet), the receiver unprotects with libsrtp2 (CSRTP).
        .target(
            name: "CaptureRTP",
            dependencies: [
                "CaptureCore", "CSRTP", "CSSL",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The call pipeline: capturer → adapter → encoder thread → RTP sender; RTP receiver → VP8 decoder. CaptureNet:
        // the plain-RTP sender and receiver own their UDP sockets.
        .target(
            name: "CaptureCall",
            dependencies: [
                "CaptureCore", "CaptureConversion", "CaptureVP8", "CaptureNet", "CaptureRTP",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                // Errno for the encoder thread's pthread_create failure (CaptureError carries it).
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // ICE: STUN messages (RFC 8489), the sans-IO ICE agent (RFC 8445, consent RFC 7675) and TURN client (RFC 8656).
        // No call layer, NIO or Foundation. CaptureNet: SocketAddress (candidates, XOR-MAPPED-ADDRESS, the servers);
        // CSSL: HMAC-SHA1 and MD5 for MESSAGE-INTEGRITY and the long-term key; CZlib: CRC-32 for FINGERPRINT.
        .target(name: "CaptureICE", dependencies: ["CaptureNet", "CSSL", "CZlib"]),
        // DTLS: a sans-IO DTLS 1.2 endpoint for DTLS-SRTP (RFC 5763, RFC 5764) on OpenSSL's memory BIOs, certificates
        // and their fingerprints. No call layer, NIO or Foundation. CSSL: OpenSSL; CaptureRTP: only for the SRTP key
        // types the handshake exports (SRTPProfile, SRTPKeyingMaterial).
        .target(name: "CaptureDTLS", dependencies: ["CaptureRTP", "CSSL"]),
        // WebRTC: one UDP 5-tuple demultiplexed by RFC 7983 that drives CaptureICE's agent and CaptureDTLS's endpoint,
        // SDP offers and answers, WHIP publishing; built on the call layer's pipeline, RTP and SRTP. The WHIP client's
        // HTTP is our own HTTP/1.1 client on NIO (NIOPosix's ClientBootstrap, NIOHTTP1's codec) with a TLS handler on
        // OpenSSL's memory BIOs (CSSL), imported `internal`: no NIO or OpenSSL type in this module's API. The media
        // path does not touch NIO (CaptureNet's sockets). CaptureCongestion: the send-side estimate the connection
        // feeds with transport-wide feedback.
        .target(
            name: "CaptureWebRTC",
            dependencies: [
                "CaptureCore", "CaptureNet", "CaptureRTP", "CaptureICE", "CaptureDTLS", "CaptureVP8", "CaptureCall",
                "CaptureCongestion", "CSSL",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // Preview: the live preview, a page and a WHEP endpoint on swift-nio's HTTP/1 (NIOCore, NIOPosix, NIOHTTP1), and
        // its WebRTC side, one capture and one encoder (CaptureCall's SendPipeline, CaptureVP8's settings) fanned out
        // to a CaptureWebRTC transport per viewer. A module of its own so that an HTTP server (and NIO's types) stay out
        // of CaptureWebRTC and of a WHIP publisher's API. CaptureICE and CaptureDTLS: the viewer's candidates, credentials
        // and fingerprint; CaptureRTP: the packetizer and retransmission settings of its sender; CaptureNet: the
        // addresses to offer and the one the server is bound to; CaptureCore: `Locked`, the frame and error types. The
        // page is resource files (Resources/: preview.html, preview.js, stamp.js), read once through Bundle.module.
        .target(
            name: "CapturePreview",
            dependencies: [
                "CaptureCore", "CaptureNet", "CaptureRTP", "CaptureICE", "CaptureDTLS", "CaptureVP8", "CaptureCall",
                "CaptureWebRTC",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            resources: [.copy("Resources")]
        ),
        // The command-line tool.
        .executableTarget(
            name: "capturer-probe",
            dependencies: [
                "CaptureCore", "CaptureConversion", "CaptureFileCameras", "CaptureV4L2", "CaptureVP8", "CaptureNet",
                "CaptureRTP", "CaptureICE", "CaptureCall", "CaptureWebRTC", "CapturePreview", "CZlib",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // Benchmarks: our conversion and VP8 paths on the same frames as the peers (Scripts/bench).
        .executableTarget(
            name: "capture-bench",
            dependencies: [
                "CaptureCore", "CaptureConversion", "CaptureFileCameras", "CaptureV4L2", "CaptureVP8", "CaptureNet",
                "CaptureRTP", "CaptureCall", "CaptureICE", "CaptureDTLS", "CaptureWebRTC",
                .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
            ]
        ),

        // libFuzzer targets, one per input we parse (Scripts/fuzz builds them with -sanitize=fuzzer,address and
        // -DCAPTURE_LIBFUZZER; a plain build replays files: capture-fuzz <target> <file>…). Not a product.
        .executableTarget(
            name: "capture-fuzz",
            dependencies: [
                "CaptureCore", "CaptureConversion", "CaptureFileCameras", "CaptureVP8", "CaptureRTP", "CLibFuzzer",
            ]
        ),

        // The suites come in three kinds, each its own targets (Documentation/Layout.md, "Tests"): unit and sans-IO
        // suites, one target per module (Tests/<Module>Tests), parallel and under both sanitizers; interop suites that
        // run local tools against our code (CaptureInteropTests: ffmpeg, GStreamer, OpenSSL, coturn, curl, Node.js, the
        // WHIP test server); and the lab (CaptureLabTests: network namespaces with Janus, headless Chromium, the vivid
        // QEMU guest). Tags (Tests/CaptureTestSupport/Tags.swift) mark kinds and needs; Scripts/test selects by them.

        // Fixtures, external tools and processes, tags and their selection, for every suite. CaptureFileCameras:
        // fixture devices are recorded dumps. CaptureRTP: parsing RTCP and unprotecting SRTP for the RTP, DTLS and
        // interop suites.
        .target(
            name: "CaptureTestSupport",
            dependencies: ["CaptureCore", "CaptureFileCameras", "CaptureRTP"],
            path: "Tests/CaptureTestSupport"
        ),
        // What the interop and lab suites start and talk to: coturn, the WHIP test server, Janus in its namespaces,
        // headless Chromium, and the preview's fake WHEP handler (shared with the unit suites of the preview's router).
        .target(
            name: "CaptureLabSupport",
            dependencies: [
                "CaptureCore", "CaptureNet", "CaptureICE", "CaptureWebRTC", "CapturePreview", "CaptureTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/CaptureLabSupport"
        ),
        // CaptureFileCameras: recorded devices and dumps are the fixtures of the selection, model and controls suites.
        .testTarget(
            name: "CaptureCoreTests",
            dependencies: [
                "CaptureCore", "CaptureFileCameras", "CaptureTestSupport",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        .testTarget(
            name: "CaptureFileCamerasTests",
            dependencies: ["CaptureCore", "CaptureFileCameras", "CaptureTestSupport"]
        ),
        .testTarget(
            name: "CaptureConversionTests",
            dependencies: ["CaptureCore", "CaptureConversion", "CaptureTestSupport"]
        ),
        // CaptureFileCameras: formats and controls are rendered as `v4l2-ctl` text and compared with v4l2-ctl's own.
        .testTarget(
            name: "CaptureV4L2Tests",
            dependencies: [
                "CaptureCore", "CaptureV4L2", "CaptureConversion", "CaptureFileCameras", "CaptureTestSupport",
            ]
        ),
        // CaptureFileCameras: the loopback suite captures from a Y4M file.
        .testTarget(
            name: "CaptureVP8Tests",
            dependencies: [
                "CaptureCore", "CaptureVP8", "CaptureConversion", "CaptureFileCameras", "CaptureTestSupport",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        .testTarget(
            name: "CaptureNetTests",
            dependencies: ["CaptureNet", .product(name: "SystemPackage", package: "swift-system")]
        ),
        // CSRTP: libsrtp2's own sender is the reference our SRTP sender's bytes are compared with.
        .testTarget(
            name: "CaptureRTPTests",
            dependencies: ["CaptureCore", "CaptureRTP", "CaptureTestSupport", "CSRTP"]
        ),
        .testTarget(
            name: "CaptureCallTests",
            dependencies: [
                "CaptureCore", "CaptureConversion", "CaptureVP8", "CaptureNet", "CaptureRTP", "CaptureCall",
                "CaptureTestSupport", .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        // The STUN, ICE and TURN suites: messages, candidates, and the sans-IO agent and TURN client on a virtual network.
        .testTarget(name: "CaptureICETests", dependencies: ["CaptureNet", "CaptureICE"]),
        // The DTLS suites: two endpoints in memory (against OpenSSL's tools: CaptureInteropTests).
        .testTarget(
            name: "CaptureDTLSTests",
            dependencies: ["CaptureNet", "CaptureRTP", "CaptureDTLS", "CaptureTestSupport"]
        ),
        // A seeded, virtual-time network (delay, jitter, loss, reordering, a rate-limited queue on a schedule) and the
        // loop that runs whole peers through it: the whole-connection tests, and the congestion-control bench to come.
        .target(name: "CaptureNetworkSimulator"),
        // Congestion control: the send-side bandwidth estimator (GoogCC-like) as sans-IO values; depends on nothing.
        .target(name: "CaptureCongestion"),
        .testTarget(
            name: "CaptureCongestionTests",
            dependencies: ["CaptureCongestion", "CaptureNetworkSimulator", "CaptureTestSupport"]),
        .testTarget(name: "CaptureNetworkSimulatorTests", dependencies: ["CaptureNetworkSimulator"]),
        .testTarget(
            name: "CaptureWebRTCTests",
            dependencies: [
                "CaptureCore", "CaptureNet", "CaptureRTP", "CaptureICE", "CaptureDTLS", "CaptureVP8", "CaptureCall",
                "CaptureWebRTC", "CapturePreview", "CaptureTestSupport", "CaptureLabSupport", "CaptureNetworkSimulator",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // Our code against local tools and servers, on loopback: DTLS with openssl s_client and s_server, RTP and SRTP
        // with ffmpeg and GStreamer, VP8 with vpxenc, vpxdec and ffmpeg, TURN through coturn, the WHIP client against
        // Scripts/whip-test-server.py, the preview's HTTP server with curl and its stamp script in Node.js, and
        // capturer-probe (built first: a dependency) sending to and receiving from ffmpeg and GStreamer.
        .testTarget(
            name: "CaptureInteropTests",
            dependencies: [
                "CaptureCore", "CaptureConversion", "CaptureFileCameras", "CaptureNet", "CaptureRTP", "CaptureICE",
                "CaptureDTLS", "CaptureVP8", "CaptureCall", "CaptureWebRTC", "CapturePreview", "CaptureTestSupport",
                "CaptureLabSupport", "capturer-probe",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // The lab: Janus and headless Chromium in network namespaces (Scripts/webrtc-peers), the preview in Chromium,
        // and the suites that run inside the vivid QEMU guest (Scripts/test-vivid) with the host's checks of what it
        // produced.
        .testTarget(
            name: "CaptureLabTests",
            dependencies: [
                "CaptureCore", "CaptureConversion", "CaptureFileCameras", "CaptureV4L2", "CaptureNet", "CaptureRTP",
                "CaptureVP8", "CaptureCall", "CaptureWebRTC", "CapturePreview", "CaptureTestSupport",
                "CaptureLabSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // CaptureFileCameras: the probe's `formats` output is checked against the format list rendered here.
        .testTarget(
            name: "CapturerProbeTests",
            dependencies: ["CaptureCore", "CaptureFileCameras", "CaptureTestSupport", "capturer-probe"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
