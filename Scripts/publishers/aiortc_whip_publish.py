#!/usr/bin/env python3
"""A minimal WHIP publisher on aiortc, for Scripts/webrtc-bench (run it with the venv's python).

    aiortc_whip_publish.py --whip URL --file FRAMES.yuyv --size 640x480 --fps 30 --bitrate 800 --seconds 10 \
        [--format yuyv422]

A VideoStreamTrack reads raw frames from FILE (looping at its end) into av.VideoFrame, paced at 30 fps by the track's
own timestamps (VideoStreamTrack.next_timestamp). RTCPeerConnection with one sendonly video transceiver whose codec
preferences are VP8 (+ its RTX), WHIP POST of the complete offer (aiortc gathers before setLocalDescription returns),
the 201's answer, SECONDS of sending from the first frame, DELETE of the Location. Prints one JSON line.

aiortc's Vp8Encoder (aiortc/codecs/vpx.py) runs libvpx through PyAV (FFmpeg's libvpx wrapper, PyAV's bundled libvpx)
with: deadline realtime, cpu-used -6, CBR (minrate = maxrate = bit_rate), rc_buf_sz 1000 ms, qmin 2, qmax 56,
gop 3000, lag-in-frames 0, noise-sensitivity 4, overshoot 15 %, undershoot 100 %, static-thresh 1, one token
partition, and 1 thread on a machine with fewer than 3 CPUs. It sets no buffer-initial/optimal size (libvpx's
defaults, 4000/5000 ms), no frame dropping (drop-frame 0), no max-intra-rate, and its cpu-used is -6 at every size.
Its bit rate is clamped to 250...1500 kbit/s and follows the REMB the receiver sends; this client pins it to
--bitrate (aiortc's default start is 500 kbit/s, and Janus's room REMB would move it), as GStreamer's vp8enc keeps
its target. Frames are converted to yuv420p by PyAV's reformat (libswscale) before encoding.
"""
import argparse
import asyncio
import json
import os
import sys
import time
import urllib.error

import whip


async def run(args):
    import av
    import numpy as np
    import aiortc
    import aiortc.codecs.vpx as vpx
    from aiortc import RTCPeerConnection, RTCRtpSender, RTCSessionDescription, VideoStreamTrack

    target = args.bitrate * 1000
    pinned = max(vpx.MIN_BITRATE, min(target, vpx.MAX_BITRATE))
    vpx.DEFAULT_BITRATE = pinned  # the encoder's start rate and its rc buffer size (bufsize = bit rate: 1000 ms)
    vpx.Vp8Encoder.target_bitrate = property(lambda self: pinned, lambda self, value: None)  # ignore REMB

    width, height = (int(v) for v in args.size.split("x"))
    bpp = {"yuyv422": 2, "yuv420p": 1.5}[args.format]
    frame_size = int(width * height * bpp)
    total_frames = os.path.getsize(args.file) // frame_size
    if total_frames == 0:
        raise SystemExit(f"{args.file} holds no {args.size} {args.format} frame")
    source = open(args.file, "rb")
    state = {"frames": 0, "first_t": None, "last_t": None, "cpu_at_first_frame": None, "loops": 0}
    first_frame = asyncio.Event()

    class FileTrack(VideoStreamTrack):
        async def recv(self):
            pts, time_base = await self.next_timestamp()
            data = source.read(frame_size)
            if len(data) < frame_size:
                source.seek(0)
                state["loops"] += 1
                data = source.read(frame_size)
            buffer = np.frombuffer(data, dtype=np.uint8)
            if args.format == "yuyv422":
                frame = av.VideoFrame.from_ndarray(buffer.reshape(height, width, 2), format="yuyv422")
            else:
                frame = av.VideoFrame.from_ndarray(buffer.reshape(height * 3 // 2, width), format="yuv420p")
            frame.pts = pts
            frame.time_base = time_base
            now = time.monotonic()
            if state["first_t"] is None:
                state["first_t"] = now
                state["cpu_at_first_frame"] = whip.cpu_seconds()
                first_frame.set()
            state["frames"] += 1
            state["last_t"] = now
            return frame

    pc = RTCPeerConnection()
    connected = asyncio.Event()
    failed = asyncio.Event()

    @pc.on("connectionstatechange")
    async def on_state():
        if pc.connectionState == "connected":
            connected.set()
        elif pc.connectionState == "failed":
            failed.set()

    t0 = time.monotonic()
    transceiver = pc.addTransceiver(FileTrack(), direction="sendonly")
    codecs = RTCRtpSender.getCapabilities("video").codecs
    vp8 = [c for c in codecs if c.mimeType == "video/VP8"]
    rtx = [c for c in codecs if c.mimeType == "video/rtx"]
    transceiver.setCodecPreferences(vp8 + rtx)
    await pc.setLocalDescription(await pc.createOffer())
    report = {"publisher": "aiortc", "aiortc": aiortc.__version__, "av": av.__version__,
              "targetBitrateKbps": pinned // 1000}
    location = None
    try:
        answer, location = await asyncio.to_thread(whip.post_offer, args.whip, pc.localDescription.sdp)
        await pc.setRemoteDescription(RTCSessionDescription(sdp=answer, type="answer"))
        done, _ = await asyncio.wait(
            [asyncio.ensure_future(connected.wait()), asyncio.ensure_future(failed.wait())],
            timeout=args.connect_timeout, return_when=asyncio.FIRST_COMPLETED)
        if not connected.is_set():
            raise RuntimeError("PeerConnection " + ("failed" if failed.is_set() else "not connected in time"))
        report["connectedMs"] = round((time.monotonic() - t0) * 1000, 1)
        await asyncio.wait_for(first_frame.wait(), timeout=args.connect_timeout)
        await asyncio.sleep(max(0.0, state["first_t"] + args.seconds - time.monotonic()))
        stats = await pc.getStats()
        for s in stats.values():
            if s.type == "outbound-rtp":
                report["packets"] = s.packetsSent
                report["rtpPayloadBytes"] = s.bytesSent
    except (RuntimeError, urllib.error.URLError, OSError, asyncio.TimeoutError) as error:
        report["error"] = str(error) or type(error).__name__
    finally:
        frames = state["frames"]
        span = (state["last_t"] or 0) - (state["first_t"] or 0)
        if location:
            report["delete"] = await asyncio.to_thread(whip.delete, location)
        await pc.close()
    report.update({
        "framesSent": frames, "sendingSeconds": round(span, 3), "fileLoops": state["loops"],
        "rtpPayloadKbps": round(report.get("rtpPayloadBytes", 0) * 8 / 1000 / span, 1) if span > 0 else None,
        "cpuSecondsAtFirstFrame": round(state["cpu_at_first_frame"], 3) if state["cpu_at_first_frame"] else None,
        "cpuSecondsTotal": round(whip.cpu_seconds(), 3),
    })
    print(json.dumps(report), flush=True)
    return 0 if "error" not in report and frames > 0 else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--whip", required=True)
    ap.add_argument("--file", required=True)
    ap.add_argument("--size", required=True)
    ap.add_argument("--fps", type=int, default=30, help="only 30 (aiortc's VideoStreamTrack paces at 30 fps)")
    ap.add_argument("--format", default="yuyv422", choices=["yuyv422", "yuv420p"])
    ap.add_argument("--bitrate", type=int, default=800, help="kbit/s")
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--connect-timeout", type=float, default=15)
    args = ap.parse_args()
    if args.fps != 30:
        raise SystemExit("aiortc's VideoStreamTrack paces at 30 fps only")
    sys.exit(asyncio.run(run(args)))


if __name__ == "__main__":
    main()
