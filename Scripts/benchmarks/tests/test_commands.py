"""The peers' command lines carry the settings the bash scripts gave them (VP8Encoder's WebRTC configuration)."""

import unittest

import sections


class CommandTests(unittest.TestCase):
    def test_ffmpeg_libvpx_settings(self):
        self.assertEqual(
            " ".join(sections.ffmpeg_vp8("1280x720")),
            "-threads 1 -filter_threads 1 -pix_fmt yuv420p -c:v libvpx -deadline realtime -cpu-used -6 -threads 1"
            " -b:v 1500k -minrate 1500k -maxrate 1500k -bufsize 1500000 -rc_init_occupancy 750000 -qmin 2 -qmax 56"
            " -undershoot-pct 100 -overshoot-pct 15 -static-thresh 1 -noise-sensitivity 4 -drop-threshold 30"
            " -max-intra-rate 900 -lag-in-frames 0 -g 3000 -auto-alt-ref 0")

    def test_gstreamer_vp8enc_settings(self):
        self.assertEqual(
            " ".join(sections.gst_vp8enc("160x120")),
            "vp8enc deadline=1 cpu-used=-4 threads=1 end-usage=cbr target-bitrate=300000 min-quantizer=2"
            " max-quantizer=56 undershoot=100 overshoot=15 buffer-size=1000 buffer-initial-size=500"
            " buffer-optimal-size=600 static-threshold=1 noise-sensitivity=4 dropframe-threshold=30"
            " max-intra-bitrate=900 keyframe-max-dist=3000 lag-in-frames=0 token-partitions=0")

    def test_vpxenc_settings(self):
        self.assertEqual(
            " ".join(sections.vpxenc_args("640x480", 800, -6, 150, "in.yuv", "out.ivf")),
            "vpxenc --codec=vp8 --rt --cpu-used=-6 --threads=1 --end-usage=cbr --lag-in-frames=0 --static-thresh=1"
            " --min-q=2 --max-q=56 --undershoot-pct=100 --overshoot-pct=15 --buf-sz=1000 --buf-initial-sz=500"
            " --buf-optimal-sz=600 --target-bitrate=800 --noise-sensitivity=4 --token-parts=0 --drop-frame=30"
            " --resize-allowed=0 --kf-max-dist=3000 --max-intra-rate=900 --timebase=1/30 --fps=30/1 --limit=150"
            " --i420 -w 640 -h 480 --ivf -o out.ivf in.yuv")

    def test_bit_rates_and_speeds_by_size(self):
        self.assertEqual([sections.kbps_for(s) for s in ("320x240", "640x480", "1280x720", "1920x1080")],
                         [300, 800, 1500, 2500])
        self.assertEqual([sections.cpu_used_for(s) for s in ("320x240", "352x288", "640x480")], [-4, -6, -6])


if __name__ == "__main__":
    unittest.main()
