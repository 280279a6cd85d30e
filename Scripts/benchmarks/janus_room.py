"""Creates a Janus VideoRoom whose REMB is the target bit rate, and a simple-whip-server endpoint publishing into it;
prints the endpoint's URL. Run in the publisher's namespace (Scripts/webrtc-peers exec-pub) by webrtc.py.

    python3 janus_room.py JANUS_URL WHIP_BASE KBPS
"""

import json
import random
import sys
import urllib.request


def post(url, body):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=5) as response:
        text = response.read().decode()
        return json.loads(text) if text.lstrip().startswith("{") else {"text": text}


def main():
    janus, whip, kbps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    room = 50000 + kbps

    def tx():
        return str(random.getrandbits(48))

    session = post(janus, {"janus": "create", "transaction": tx()})["data"]["id"]
    handle = post(f"{janus}/{session}", {"janus": "attach", "plugin": "janus.plugin.videoroom", "transaction": tx()})
    reply = post(f"{janus}/{session}/{handle['data']['id']}", {"janus": "message", "transaction": tx(), "body": {
        "request": "create", "room": room, "description": f"webrtc-bench {kbps} kbit/s", "publishers": 6,
        "bitrate": kbps * 1000, "fir_freq": 10, "videocodec": "vp8", "audiocodec": "opus", "permanent": False}})
    if reply.get("plugindata", {}).get("data", {}).get("videoroom") != "created":
        raise SystemExit(f"VideoRoom create: {reply}")
    post(f"{janus}/{session}", {"janus": "destroy", "transaction": tx()})
    post(f"{whip}/create", {"id": f"bench{kbps}", "room": room, "label": f"webrtc-bench {kbps} kbit/s"})
    print(f"{whip}/endpoint/bench{kbps}")


if __name__ == "__main__":
    main()
