// capture-bench: times our VP8 encoder and our frame conversion on frames from a file, for Scripts/bench.
//
//   capture-bench vp8 --input clip.yuv --size 640x480 [--layout i420|nv12] [--frames 150] [--kbps 1000] [--fps 30]
//                     [--runs 3] [--ivf out.ivf]
//   capture-bench convert --input frames.yuyv|frames.mjpeg --format YUYV|MJPG --size 1280x720 [--output nv12|i420]
//                     [--frames 150] [--runs 3]
//   capture-bench capture --size 640x480 [--layout nv12|i420] [--frames 1000] [--warmup 100] [--copy yes] [--device /dev/videoN] [--format FOURCC]
//   capture-bench pipeline --size WxH [--input FILE --format YUYV|MJPG|…] [--frames 150] [--kbps 1500] [--fps 30]
//                     [--streams N] [--warmup 10] [--ivf out.ivf]
//   capture-bench send --size 640x480 [--frames 1000] [--warmup 100] [--kbps 1000] [--srtp yes] [--paced yes]
//                     [--scope all|sender] [--webrtc yes] [--rid h]
//   capture-bench idle [--pairs N] [--seconds S]   (idle WebRTC connections: threads, wake-ups, CPU)
//   capture-bench connection [--frames N] [--warmup W] [--bytes B]   (the connection's send path: allocations)
//   capture-bench twcc [--packets N] [--warmup W]   (TWCC send history and feedback generator: allocations)
//   capture-bench congestion [--packets N] [--warmup W]   (pacer and estimator per packet: allocations, callgrind)
//   capture-bench simulcast --input clip.yuv --size 1280x720 [--layers 3] [--temporal-layers 3] [--frames 150]
//                     [--warmup 10] [--kbps 2500] [--runs 3]   (SendPipeline simulcast against one stream: CPU, allocations)
//
// Each prints one line of `key=value` pairs (the best of the runs). Timing covers only the encode or convert calls.
import CaptureCore

#if canImport(Glibc)
    import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first, let options = BenchOptions(Array(arguments.dropFirst())) else {
    BenchOptions.usage()
    exit(2)
}
do {
    switch command {
    case "vp8": try VP8Bench(options).run()
    case "convert": try ConversionBench(options).run()
    case "capture": try await CaptureBench(options).run()
    case "pipeline": try await PipelineBench(options).run()
    case "send": try await SendBench(options).run()
    case "idle": try await IdleBench(options).run()
    case "connection": try ConnectionBench(options).run()
    case "twcc": try TWCCBench(options).run()
    case "congestion": try CongestionBench(options).run()
    case "simulcast": try SimulcastBench(options).run()
    default:
        BenchOptions.usage()
        exit(2)
    }
} catch {
    printError("capture-bench: \(error)\n")
    exit(1)
}
