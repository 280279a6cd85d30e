#!/usr/bin/python3
"""A minimal WHIP publisher on GStreamer's webrtcbin, for Scripts/webrtc-bench.

    gst_whip_publish.py --whip URL --file FRAMES.yuyv --size 640x480 --fps 30 --bitrate 800 --seconds 10 \
        [--cpu-used -6] [--format yuy2]

Pipeline: filesrc ! rawvideoparse ! clocksync (sync-to-first: real time from the first frame) ! videoconvert
n-threads=1 ! I420 ! vp8enc (Scripts/bench's settings) ! rtpvp8pay ! webrtcbin (max-bundle, sendonly, do-nack).
Signalling: the offer once ICE gathering is complete (no trickle), POST it (application/sdp), set the 201's answer,
DELETE the Location at the end. The source is held (a blocking pad probe) until the PeerConnection is connected, so
that frames are read, converted and encoded only while they can be sent, as the other publishers do. Prints one JSON
line: frames sent (encoded frames that reached the payloader after the connection), RTP packets and bytes out of the
payloader, connect time, and the CPU time of the process at the first sent frame (start-up cost).

Debian's simple-whip-client is not used: it links libsoup 2 while webrtcbin's libnice pulls libsoup 3 in (libgupnp-igd),
and libsoup aborts with both in one process. HTTP here is urllib, which loads neither.
"""
import argparse
import json
import sys
import time
import urllib.error

import gi
import whip

gi.require_version("Gst", "1.0")
gi.require_version("GstWebRTC", "1.0")
gi.require_version("GstSdp", "1.0")
from gi.repository import GLib, Gst, GstSdp, GstWebRTC  # noqa: E402


def fail(message):
    print(json.dumps({"publisher": "gstreamer-webrtcbin", "error": message}), flush=True)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--whip", required=True)
    ap.add_argument("--file", required=True)
    ap.add_argument("--size", required=True)
    ap.add_argument("--fps", type=int, default=30)
    ap.add_argument("--format", default="yuy2", help="rawvideoparse format (yuy2 = YUYV, i420)")
    ap.add_argument("--bitrate", type=int, default=800, help="kbit/s")
    ap.add_argument("--cpu-used", type=int, default=-6)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--connect-timeout", type=float, default=15)
    args = ap.parse_args()
    width, height = (int(v) for v in args.size.split("x"))

    Gst.init(None)
    convert = "" if args.format == "i420" else "videoconvert n-threads=1 ! video/x-raw,format=I420 ! "
    description = (
        f"filesrc location={args.file} ! rawvideoparse name=parse format={args.format} width={width} "
        f"height={height} framerate={args.fps}/1 ! clocksync sync-to-first=true ! {convert}"
        f"vp8enc deadline=1 cpu-used={args.cpu_used} threads=1 end-usage=cbr target-bitrate={args.bitrate * 1000} "
        "min-quantizer=2 max-quantizer=56 undershoot=100 overshoot=15 buffer-size=1000 buffer-initial-size=500 "
        "buffer-optimal-size=600 static-threshold=1 noise-sensitivity=4 dropframe-threshold=30 "
        "max-intra-bitrate=900 keyframe-max-dist=3000 lag-in-frames=0 token-partitions=0 ! "
        "rtpvp8pay name=pay pt=96 picture-id-mode=15-bit mtu=1200 ! "
        "application/x-rtp,media=video,encoding-name=VP8,payload=96,clock-rate=90000 ! "
        "webrtcbin name=webrtc bundle-policy=max-bundle"
    )
    pipeline = Gst.parse_launch(description)
    webrtc = pipeline.get_by_name("webrtc")
    loop = GLib.MainLoop()
    state = {
        "connected": False, "frames": 0, "packets": 0, "bytes": 0, "location": None, "error": None,
        "t0": time.monotonic(), "connected_ms": None, "cpu_at_first_frame": None, "first_frame_t": None,
        "last_frame_t": None, "eos": False,
    }

    def stop(error=None):
        if error and not state["error"]:
            state["error"] = error
        loop.quit()

    # Hold the source until the PeerConnection is connected (sync-to-first then starts the clock at that frame).
    parse_src = pipeline.get_by_name("parse").get_static_pad("src")
    hold = parse_src.add_probe(Gst.PadProbeType.BLOCK | Gst.PadProbeType.BUFFER, lambda pad, info: Gst.PadProbeReturn.OK)

    def on_frame(pad, info):
        if state["cpu_at_first_frame"] is None:
            state["cpu_at_first_frame"] = whip.cpu_seconds()
            state["first_frame_t"] = time.monotonic()
        state["frames"] += 1
        state["last_frame_t"] = time.monotonic()
        return Gst.PadProbeReturn.OK

    def on_rtp(pad, info):
        if info.type & Gst.PadProbeType.BUFFER_LIST:
            blist = info.get_buffer_list()
            for i in range(blist.length()):
                state["packets"] += 1
                state["bytes"] += blist.get(i).get_size()
        else:
            state["packets"] += 1
            state["bytes"] += info.get_buffer().get_size()
        return Gst.PadProbeReturn.OK

    pay = pipeline.get_by_name("pay")
    pay.get_static_pad("sink").add_probe(Gst.PadProbeType.BUFFER, on_frame)
    pay.get_static_pad("src").add_probe(Gst.PadProbeType.BUFFER | Gst.PadProbeType.BUFFER_LIST, on_rtp)

    def post_offer():
        offer = webrtc.get_property("local-description").sdp.as_text()
        try:
            answer, state["location"] = whip.post_offer(args.whip, offer)
        except RuntimeError as error:
            return stop(str(error))
        except (urllib.error.URLError, OSError) as error:
            return stop(f"WHIP POST failed: {error}")
        result, message = GstSdp.SDPMessage.new_from_text(answer)
        if result != GstSdp.SDPResult.OK:
            return stop("unparsable SDP answer")
        description = GstWebRTC.WebRTCSessionDescription.new(GstWebRTC.WebRTCSDPType.ANSWER, message)
        webrtc.emit("set-remote-description", description, Gst.Promise.new())
        return False

    def on_gathering(element, _pspec):
        if element.get_property("ice-gathering-state") == GstWebRTC.WebRTCICEGatheringState.COMPLETE:
            GLib.idle_add(post_offer)

    def on_connection(element, _pspec):
        connection = element.get_property("connection-state")
        if connection == GstWebRTC.WebRTCPeerConnectionState.CONNECTED and not state["connected"]:
            state["connected"] = True
            state["connected_ms"] = round((time.monotonic() - state["t0"]) * 1000, 1)
            parse_src.remove_probe(hold)
            GLib.timeout_add(int(args.seconds * 1000), lambda: stop() or False)
        elif connection == GstWebRTC.WebRTCPeerConnectionState.FAILED:
            GLib.idle_add(lambda: stop("PeerConnection failed") or False)

    def on_offer(promise, _element, _data):
        promise.wait()
        reply = promise.get_reply()
        offer = reply.get_value("offer") if reply and reply.has_field("offer") else None
        if offer is None:
            error = reply.get_value("error") if reply and reply.has_field("error") else None
            GLib.idle_add(lambda: stop(f"create-offer failed: {error.message if error else reply}") or False)
            return
        webrtc.emit("set-local-description", offer, Gst.Promise.new())

    def on_negotiation_needed(element):
        transceiver = element.emit("get-transceiver", 0)
        transceiver.set_property("direction", GstWebRTC.WebRTCRTPTransceiverDirection.SENDONLY)
        transceiver.set_property("do-nack", True)
        # vp8enc has no output caps before its first frame, and the source is held until the connection is up:
        # the offer's VP8 m-line comes from the transceiver's codec preferences instead.
        transceiver.set_property("codec-preferences", Gst.Caps.from_string(
            "application/x-rtp,media=video,encoding-name=VP8,payload=96,clock-rate=90000"))
        element.emit("create-offer", None, Gst.Promise.new_with_change_func(on_offer, element, None))

    webrtc.connect("on-negotiation-needed", on_negotiation_needed)
    webrtc.connect("notify::ice-gathering-state", on_gathering)
    webrtc.connect("notify::connection-state", on_connection)

    def on_message(_bus, message):
        if message.type == Gst.MessageType.ERROR:
            error, debug = message.parse_error()
            stop(f"{error.message} ({debug})")
        elif message.type == Gst.MessageType.EOS:
            state["eos"] = True
            stop()

    bus = pipeline.get_bus()
    bus.add_signal_watch()
    bus.connect("message", on_message)
    GLib.timeout_add(int(args.connect_timeout * 1000),
                     lambda: (not state["connected"] and stop("not connected in time")) or False)
    pipeline.set_state(Gst.State.PLAYING)
    loop.run()
    pipeline.set_state(Gst.State.NULL)

    deleted = whip.delete(state["location"], timeout=5) if state["location"] else None
    span = (state["last_frame_t"] or 0) - (state["first_frame_t"] or 0)
    report = {
        "publisher": "gstreamer-webrtcbin", "gstreamer": Gst.version_string(), "framesSent": state["frames"],
        "packets": state["packets"], "rtpBytes": state["bytes"],
        "rtpKbps": round(state["bytes"] * 8 / 1000 / span, 1) if span > 0 else None,
        "connectedMs": state["connected_ms"], "sendingSeconds": round(span, 3),
        "cpuSecondsAtFirstFrame": round(state["cpu_at_first_frame"], 3) if state["cpu_at_first_frame"] else None,
        "cpuSecondsTotal": round(whip.cpu_seconds(), 3), "endOfFile": state["eos"], "delete": deleted,
    }
    if state["error"]:
        report["error"] = state["error"]
    print(json.dumps(report), flush=True)
    sys.exit(1 if state["error"] or state["frames"] == 0 else 0)


if __name__ == "__main__":
    main()
