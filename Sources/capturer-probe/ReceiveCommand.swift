import ArgumentParser
import CaptureCall
import CaptureCore
import CaptureNet
import CaptureRTP
import Foundation

extension CapturerProbe {
    /// `capturer-probe receive`: receive VP8 over RTP (optionally SRTP), decode it, send RTCP feedback, and report.
    struct Receive: AsyncParsableCommand, ProbeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Receive VP8 over RTP (SRTP when the SDP has a=crypto), decode it, send receiver reports and "
                + "PLIs; report frames received, complete, lost and decoded, PLIs, jitter and bit rate.")

        @OptionGroup var global: GlobalOptions

        @Option(help: "The UDP port to receive RTP on (RTCP on the next one unless the SDP has a=rtcp-mux).")
        var port: Int?

        @Option(
            help: ArgumentHelp(
                "Take the port, payload type, rtcp-mux and SRTP key from this SDP file.", valueName: "file.sdp"))
        var sdp: String?

        @Option(help: ArgumentHelp("The address to listen on.", valueName: "address"))
        var bind = "127.0.0.1"

        @Option(
            name: [.short, .long],
            help: ArgumentHelp("Write the received VP8 stream to this IVF file.", valueName: "file.ivf"))
        var output: String?

        @Option(help: "Stop after this many decoded frames.")
        var frames: Int?

        @Option(help: "Stop after this many seconds (default 10 when --frames is not given).")
        var seconds: Double?

        @Option(
            help: ArgumentHelp(
                "Drop this percentage of arriving RTP packets at random (reproducibly).", valueName: "pct"))
        var loss: Double?

        @Option(help: "The seed of the --loss generator.")
        var seed: UInt64 = 1

        @Option(
            help: ArgumentHelp(
                "Stop when no packet arrived for this long once the stream started.", valueName: "seconds"))
        var idle = 3.0

        func validate() throws {
            if port == nil, sdp == nil { throw ValidationError("give --port or --sdp") }
            if let port, !(1...65_534).contains(port) { throw ValidationError("--port must be 1...65534") }
            if let frames, frames < 1 { throw ValidationError("--frames must be at least 1") }
            if let seconds, !(seconds > 0 && seconds.isFinite) { throw ValidationError("--seconds must be positive") }
            if let loss, !(0...100).contains(loss) { throw ValidationError("--loss must be 0...100") }
            guard idle > 0, idle.isFinite else { throw ValidationError("--idle must be positive") }
        }

        struct Output: Codable {
            var schemaVersion = jsonSchemaVersion
            var port: Int
            var srtp: Bool
            var loss: Double?
            var seed: UInt64?
            var statistics: VideoReceiverStatistics
            var output: String?
        }

        mutating func run() async throws {
            let parameters = try sdp.map(ReceiveSession.parameters(sdpFile:))
            let listenPort = port.map(UInt16.init) ?? parameters?.port ?? 0
            let local: SocketAddress
            do {
                local = try SocketAddress(host: bind, port: listenPort)
            } catch {
                throw ProbeFailure(status: .badAddress, message: "--bind \(bind): not a numeric address (\(error))")
            }
            if let output { try OutputFile.checkWritable(output) }
            let configuration = VideoReceiverConfiguration(
                local: local, rtcpMux: parameters?.rtcpMux ?? false,
                assembler: RTPReceiverConfiguration(payloadType: parameters?.payloadType ?? 96),
                srtp: parameters?.crypto,
                loss: loss.map { SimulatedLoss(percent: $0, seed: seed) }, outputPath: output,
                transportSequenceNumberExtensionID: parameters?.transportWideCCExtensionID)
            let receiver: VideoReceiver
            do {
                receiver = try VideoReceiver(configuration: configuration)
            } catch {
                let status: ExitStatus =
                    switch error.code {
                    case .portInUse: .portInUse
                    case .badAddress: .badAddress
                    case .srtp: .srtpKeyRejected
                    default: .failure
                    }
                throw ProbeFailure(status: status, message: error.message)
            }
            let limit = frames ?? Int.max
            let deadlineNs = MonotonicClock.nowNs() + UInt64((seconds ?? (frames == nil ? 10 : 3_600)) * 1e9)
            var lastPackets = 0
            var lastChangeNs = MonotonicClock.nowNs()
            while MonotonicClock.nowNs() < deadlineNs {
                let statistics = receiver.statistics
                if statistics.framesDecoded >= limit { break }
                let nowNs = MonotonicClock.nowNs()
                let arrived = statistics.datagrams
                if arrived != lastPackets {
                    lastPackets = arrived
                    lastChangeNs = nowNs
                } else if arrived > 0, nowNs - lastChangeNs > UInt64(idle * 1e9) {
                    break
                }
                try await Task.sleep(for: .milliseconds(10))
            }
            await receiver.stop()
            let statistics = receiver.statistics
            if configuration.srtp != nil, statistics.srtpFailures > 0, statistics.packets == 0 {
                throw ProbeFailure(
                    status: .srtpKeyRejected,
                    message: "all \(statistics.srtpFailures) packets failed SRTP authentication (wrong key?)",
                    hint: "use the a=crypto line of the sender's SDP")
            }
            let result = Output(
                port: Int(receiver.localAddress.port), srtp: configuration.srtp != nil, loss: loss,
                seed: loss == nil ? nil : seed, statistics: statistics, output: output)
            if global.json { try printJSON(result) } else { print(Self.text(result)) }
        }

        static func text(_ r: Output) -> String {
            let s = r.statistics
            return """
                port:        \(r.port)\(r.srtp ? " (SRTP)" : "")\(r.loss.map { ", simulated loss \($0)% seed \(r.seed ?? 0)" } ?? "")
                packets:     \(s.packets) received, \(s.packetsLost) lost, \(s.packetsDroppedBySimulation) dropped by \
                simulation, \(s.malformed) malformed, \(s.strayPackets) stray, \(s.srtpFailures) failed SRTP
                frames:      \(s.framesReceived) received, \(s.framesComplete) complete, \(s.framesLost) lost, \
                \(s.framesDecoded) decoded (\(s.keyFramesDecoded) key)
                RTCP:        \(s.plisSent) PLIs, \(s.receiverReportsSent) receiver reports sent, \
                \(s.senderReportsReceived) sender reports received
                stream:      jitter \(s.jitterMs.rounded(places: 2)) ms, \(s.bitrateKbps.rounded(places: 1)) kbit/s
                """ + (r.output.map { "\noutput:      \($0)" } ?? "")
                    + (s.transportFeedbackSent > 0
                        ? "\nTWCC:        \(s.transportNumberedPackets) numbered packets, \(s.transportFeedbackSent) "
                            + "feedback messages sent" : "")
        }
    }
}

/// Reading a session description for `receive`.
enum ReceiveSession {
    /// The video session in `path`, or exit 13 (malformed) / 7 (unreadable).
    static func parameters(sdpFile path: String) throws -> VideoSessionParameters {
        // FileHandle, not FileManager.contents(atPath:): Foundation's read of an empty file leaks its 4 KB buffer,
        // which LeakSanitizer reports at exit (and turns status 13 into 1).
        guard let handle = FileHandle(forReadingAtPath: path), let data = try? handle.readToEnd() ?? Data() else {
            throw ProbeFailure(status: .deviceNotFound, message: "\(path): cannot read the SDP file")
        }
        do {
            let description = try SessionDescription(parsing: String(decoding: data, as: UTF8.self))
            return try VideoSessionParameters(description: description)
        } catch {
            throw ProbeFailure(
                status: .malformedSessionDescription, message: "\(path): not a usable session description (\(error))",
                hint: "give the SDP file 'capturer-probe send --sdp' wrote")
        }
    }
}
