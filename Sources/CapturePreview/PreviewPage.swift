/// The preview page served at `/`: plain HTML and JavaScript, no external resources.
///
/// It plays the camera through WHEP (a recvonly video transceiver; the offer is POSTed, ICE candidates gathered
/// first, to `/whep` or to the `?whep=URL` of the query string, so it also plays other servers' streams) and shows
/// the video's size, frame rate and bit rate (`getStats()` inbound-rtp), rotation (the server's figures and the
/// picture's aspect), RTT (the selected candidate pair), frames decoded and freezes. It reads the synthetic camera's
/// frame stamp (frame number, capture time and a check, three rows of 32 cells at the bottom of each frame) with
/// `requestVideoFrameCallback`, counting frames out of order, repeated or skipped and measuring glass-to-glass latency
/// (p50, p95). Everything is in `window.previewState`; with `?seconds=N&report=URL` it POSTs a JSON summary to `URL`
/// after N seconds (`text/plain`, no preflight) and ends the viewer. The viewer's resource is DELETEd on unload.
public enum PreviewPage {
    /// The script that reads the synthetic camera's ``CaptureCore/FrameStamp`` back from a `<video>` element (the
    /// preview page embeds it; a page of your own, such as a viewer behind an SFU, can load it too):
    /// `watchStamps(video, stamps, onLatency)` counts every presented frame's stamp into `stamps = newStampCounts()`
    /// (frames read, out of order, repeated, skipped, unreadable; announced frames out of RTP order; pictures that
    /// were not the announced frame) and hands its glass-to-glass latency in milliseconds to `onLatency`;
    /// `latencySummary(latencies)` gives `{ count, p50, p95 }`.
    /// The clock is the page's `Date.now()`: a latency is meaningful when the camera and the page share a machine.
    public static let stampScript = #"""
        "use strict";
        // The synthetic camera's stamp (FrameStamp): three rows of 32 cells at the bottom of the frame, white = 1, most
        // significant bit first: the frame number, the capture time's low 32 bits (ms since the Unix epoch), and a
        // check, the complement of the two XORed. Only watchStamps needs a DOM: the others are tested on their own.
        const stampRows = 3;
        function stampGeometry(width, height) {
          const rowHeight = Math.max(8, Math.floor(height / 40) & ~1);
          const cellWidth = Math.floor(width / 32);
          return cellWidth < 1 || height < stampRows * rowHeight ? null : { rowHeight, cellWidth };
        }

        // Decodes the RGBA `pixels` of the frame's bottom stampRows * rowHeight rows (`width` wide) by each cell's
        // centre; null when the check row disagrees (a cell misread).
        function decodeStamp(pixels, width, { rowHeight, cellWidth }) {
          const row = (index) => {
            const y = index * rowHeight + (rowHeight >> 1);
            let value = 0;
            for (let cell = 0; cell < 32; cell++) {
              const i = (y * width + cell * cellWidth + (cellWidth >> 1)) * 4;
              const luma = 0.299 * pixels[i] + 0.587 * pixels[i + 1] + 0.114 * pixels[i + 2];
              value = value * 2 + (luma >= 128 ? 1 : 0);
            }
            return value;
          };
          const frame = row(0), time = row(1);
          return row(2) === (~(frame ^ time)) >>> 0 ? { frame, time } : null;
        }

        // The capture time from its low 32 bits, the high bits from `now`: the candidate nearest to `now`.
        function captureTime(low, now) {
          let time = Math.floor(now / 2 ** 32) * 2 ** 32 + low;
          if (time > now + 2 ** 31) time -= 2 ** 32;
          else if (time < now - 2 ** 31) time += 2 ** 32;
          return time;
        }

        // Fresh counts for trackStamp.
        function newStampCounts() {
          return {
            frames: 0, lastFrame: null, outOfOrder: 0, repeated: 0, skipped: 0, invalid: 0,
            mismatched: 0, rtpOutOfOrder: 0, lastRTP: null, offset: null, candidate: null,
          };
        }

        // The RTP timestamp (90 kHz) and the stamp's capture time come from the same capture clock, so they keep one
        // offset over a stream; an RTP timestamp wraps every 2^32 / 90 ms. The signed difference of two offsets, in ms.
        const rtpPeriodMs = 2 ** 32 / 90;
        function offsetDifference(a, b) {
          const d = (((a - b) % rtpPeriodMs) + rtpPeriodMs) % rtpPeriodMs;
          return d > rtpPeriodMs / 2 ? d - rtpPeriodMs : d;
        }

        // Counts `stamp` into `s` (from newStampCounts) and returns its glass-to-glass latency in ms, or null when the
        // stamp is unreadable (null: its check failed; or a latency beyond -1 s…60 s) or not the announced frame's.
        // `rtpTimestamp` is the RTP timestamp requestVideoFrameCallback announced with the frame (WebRTC sources), or
        // undefined. With it, the announced frames are checked for order by their RTP timestamps (rtpOutOfOrder), and
        // the picture read is checked to be the announced frame: its capture time must keep the stream's offset to the
        // RTP timestamp (within 2 ms, the stamp's rounding), settled by the first two reads that agree. A picture that
        // does not (the canvas drew a frame other than the one announced) is counted as mismatched, with how far its
        // capture time lies from the announced frame's (firstMismatch), and left out of the order and latency figures.
        function trackStamp(s, stamp, now, rtpTimestamp) {
          if (rtpTimestamp !== undefined && rtpTimestamp !== null) {
            if (s.lastRTP !== null) {
              const step = (rtpTimestamp - s.lastRTP + 2 ** 32) % 2 ** 32;
              if (step === 0 || step >= 2 ** 31) s.rtpOutOfOrder++;
            }
            s.lastRTP = rtpTimestamp;
          }
          if (stamp === null) {
            s.invalid++;
            return null;
          }
          const time = captureTime(stamp.time, now);
          const latency = now - time;
          if (latency < -1000 || latency > 60000) {
            s.invalid++;
            return null;
          }
          if (rtpTimestamp !== undefined && rtpTimestamp !== null) {
            const offset = time - rtpTimestamp / 90;
            if (s.offset === null) {
              if (s.candidate !== null && Math.abs(offsetDifference(offset, s.candidate)) <= 2) s.offset = s.candidate;
              else s.candidate = offset;
            } else {
              const apart = offsetDifference(offset, s.offset);
              if (Math.abs(apart) > 2) {
                if (!s.mismatched) s.firstMismatch = { frame: stamp.frame, apartMs: Math.round(apart), read: s.frames };
                s.mismatched++;
                return null;
              }
            }
          }
          s.frames++;
          if (s.lastFrame !== null) {
            if (stamp.frame === s.lastFrame) s.repeated++;
            else if (stamp.frame < s.lastFrame) {
              // The first disorder, kept whole: which frame came after which, and how far into the viewing.
              if (!s.outOfOrder) s.firstOutOfOrder = { frame: stamp.frame, after: s.lastFrame, read: s.frames };
              s.outOfOrder++;
            }
            else s.skipped += stamp.frame - s.lastFrame - 1;
          }
          if (s.lastFrame === null || stamp.frame > s.lastFrame) s.lastFrame = stamp.frame;
          return latency;
        }

        function percentile(sorted, p) {
          return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : null;
        }

        // { count, p50, p95 } of an array of latencies (ms).
        function latencySummary(latencies) {
          const sorted = latencies.slice().sort((a, b) => a - b);
          return { count: sorted.length, p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95) };
        }

        // Reads the stamp of every frame `video` presents (requestVideoFrameCallback), counting it into `stamps` (see
        // trackStamp) and handing its glass-to-glass latency to `onLatency`. False where the browser has no
        // requestVideoFrameCallback.
        function watchStamps(video, stamps, onLatency) {
          if (!("requestVideoFrameCallback" in video)) return false;
          const canvas = document.createElement("canvas");
          const context = canvas.getContext("2d", { willReadFrequently: true });
          const onFrame = (now, metadata) => {
            const width = metadata.width || video.videoWidth;
            const height = metadata.height || video.videoHeight;
            const geometry = stampGeometry(width, height);
            if (geometry) {
              const rows = stampRows * geometry.rowHeight;
              canvas.width = width;
              canvas.height = rows;
              context.drawImage(video, 0, height - rows, width, rows, 0, 0, width, rows);
              const stamp = decodeStamp(context.getImageData(0, 0, width, rows).data, width, geometry);
              const latency = trackStamp(stamps, stamp, Date.now(), metadata.rtpTimestamp);
              if (latency !== null) onLatency(latency);
            }
            video.requestVideoFrameCallback(onFrame);
          };
          video.requestVideoFrameCallback(onFrame);
          return true;
        }
        """#

    /// The page's HTML, script included.
    public static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Camera preview</title>
        <style>
          body { font: 14px system-ui, sans-serif; margin: 1em; background: #111; color: #eee; }
          video { max-width: 100%; max-height: 75vh; background: #000; display: block; }
          table { border-collapse: collapse; margin-top: .5em; }
          td { padding: 1px 10px 1px 0; font-variant-numeric: tabular-nums; }
          td:first-child { color: #999; }
          #status.error { color: #f66; }
        </style>
        </head>
        <body>
        <video id="video" autoplay muted playsinline></video>
        <div id="status">starting</div>
        <table id="figures"></table>
        <script id="stamp">
        \#(stampScript)
        </script>
        <script>
        "use strict";
        const query = new URLSearchParams(location.search);
        const whepURL = new URL(query.get("whep") || "/whep", location.href).href;
        const figuresURL = new URL("/figures", whepURL).href;
        const seconds = Number(query.get("seconds") || 0);
        const reportURL = query.get("report");
        const video = document.getElementById("video");
        const state = window.previewState = {
          status: "starting", error: null, whep: whepURL, resource: null, startedAt: Date.now(), done: false,
          width: 0, height: 0, orientation: null, fps: 0, bitrateKbps: 0, rotation: null, aspectMatches: null,
          rttMs: null,
          framesDecoded: 0, framesDropped: 0, freezeCount: 0, packetsLost: 0, figures: null,
          stamps: newStampCounts(),
          latencyMs: { count: 0, p50: null, p95: null, last: null },
        };
        const latencies = [];
        let pc = null;

        function setStatus(text, error) {
          state.status = text;
          if (error) state.error = String(error);
          const el = document.getElementById("status");
          el.textContent = error ? text + ": " + error : text;
          el.className = error ? "error" : "";
        }

        async function start() {
          pc = new RTCPeerConnection();
          pc.addTransceiver("video", { direction: "recvonly" });
          pc.ontrack = (event) => { video.srcObject = event.streams[0] || new MediaStream([event.track]); };
          pc.onconnectionstatechange = () => setStatus(pc.connectionState);
          await pc.setLocalDescription(await pc.createOffer());
          await new Promise((resolve) => {  // WHEP without trickle: send every candidate in the offer
            if (pc.iceGatheringState === "complete") return resolve();
            pc.addEventListener("icegatheringstatechange", () => {
              if (pc.iceGatheringState === "complete") resolve();
            });
            setTimeout(resolve, 2000);
          });
          const response = await fetch(whepURL, {
            method: "POST", headers: { "Content-Type": "application/sdp" }, body: pc.localDescription.sdp,
          });
          if (response.status !== 201) throw new Error("WHEP " + response.status + " " + await response.text());
          const resource = response.headers.get("Location");
          if (resource) state.resource = new URL(resource, whepURL).href;
          await pc.setRemoteDescription({ type: "answer", sdp: await response.text() });
          setStatus("connecting");
          watchStamps(video, state.stamps, (latency) => {
            if (latencies.length < 100000) latencies.push(latency);
            state.latencyMs.last = latency;
          });
        }

        let previous = null;
        async function sample() {
          if (!pc || pc.signalingState === "closed") return;
          const stats = await pc.getStats();
          let selectedPair = null;
          stats.forEach((report) => {
            if (report.type === "inbound-rtp" && report.kind === "video") {
              if (previous && report.timestamp > previous.timestamp) {
                const elapsed = (report.timestamp - previous.timestamp) / 1000;
                const bits = (report.bytesReceived - previous.bytesReceived) * 8;
                state.bitrateKbps = Math.round(bits / elapsed / 10) / 100;
                state.fps = report.framesPerSecond ??
                  Math.round((report.framesDecoded - previous.framesDecoded) / elapsed * 10) / 10;
              }
              previous = report;
              state.framesDecoded = report.framesDecoded || 0;
              state.framesDropped = report.framesDropped || 0;
              state.freezeCount = report.freezeCount || 0;
              state.packetsLost = report.packetsLost || 0;
            }
            if (report.type === "transport" && report.selectedCandidatePairId) {
              selectedPair = stats.get(report.selectedCandidatePairId);
            }
            if (!selectedPair && report.type === "candidate-pair" && report.nominated && report.state === "succeeded") {
              selectedPair = report;
            }
          });
          if (selectedPair && selectedPair.currentRoundTripTime !== undefined) {
            state.rttMs = Math.round(selectedPair.currentRoundTripTime * 10000) / 10;
          }
          state.width = video.videoWidth;
          state.height = video.videoHeight;
          state.orientation = !state.width || !state.height ? null
            : state.width >= state.height ? "landscape" : "portrait";
          Object.assign(state.latencyMs, latencySummary(latencies));
          try {
            state.figures = await (await fetch(figuresURL, { cache: "no-store" })).json();
            state.rotation = state.figures.rotation;
            // The sender's size is after its rotation: the picture should have the same orientation.
            const f = state.figures;
            state.aspectMatches = !f.width || !f.height || !state.width || !state.height ? null
              : (f.width >= f.height) === (state.width >= state.height);
          } catch (error) {
            state.figures = null;
          }
          render();
        }

        function render() {
          const s = state.stamps;
          const rows = [
            ["size", state.width + "\u00d7" + state.height + (state.orientation ? " " + state.orientation : "")],
            ["fps", state.fps], ["bit rate", state.bitrateKbps + " kbit/s"],
            ["rotation", (state.rotation === null ? "?" : state.rotation + "\u00b0") +
              (state.aspectMatches === false ? " (picture orientation differs from the sender's!)" : "")],
            ["RTT", state.rttMs === null ? "?" : state.rttMs + " ms"],
            ["frames decoded", state.framesDecoded], ["freezes", state.freezeCount],
            ["packets lost", state.packetsLost],
            ["stamped frames", s.frames + " (out of order " + s.outOfOrder + ", repeated " + s.repeated +
              ", skipped " + s.skipped + ", unreadable " + s.invalid + ", not the announced frame " + s.mismatched +
              ")"],
            ["glass to glass", state.latencyMs.p50 === null ? "?" :
              "p50 " + state.latencyMs.p50 + " ms, p95 " + state.latencyMs.p95 + " ms"],
          ];
          if (state.figures) {
            const f = state.figures;
            rows.push(["sender", f.width + "\u00d7" + f.height + ", " + f.fps + " fps, " + f.bitrateKbps +
              " kbit/s, " + f.viewers + " viewer(s)" + (f.rttMs == null ? "" : ", RTT " + f.rttMs + " ms")]);
          }
          const table = document.getElementById("figures");
          table.replaceChildren(...rows.map(([name, value]) => {
            const tr = document.createElement("tr");
            for (const text of [name, String(value)]) {
              const td = document.createElement("td");
              td.textContent = text;
              tr.appendChild(td);
            }
            return tr;
          }));
        }

        function endViewer() {
          if (state.resource) fetch(state.resource, { method: "DELETE", keepalive: true }).catch(() => {});
          state.resource = null;
          if (pc) pc.close();
        }

        // With ?snapshot=1 the summary carries a PNG of what the page shows (the picture and its figures), drawn on a
        // canvas: headless Chromium's own --screenshot cannot wait for live video.
        function snapshot() {
          const width = Math.max(video.videoWidth, 480), lines = [
            "size " + state.width + "x" + state.height + "   fps " + state.fps + "   bit rate " +
              state.bitrateKbps + " kbit/s   rotation " + state.rotation + "°   RTT " + state.rttMs + " ms",
            "frames decoded " + state.framesDecoded + "   freezes " + state.freezeCount + "   packets lost " +
              state.packetsLost,
            "stamped frames " + state.stamps.frames + " (out of order " + state.stamps.outOfOrder + ", repeated " +
              state.stamps.repeated + ")   glass to glass p50 " + state.latencyMs.p50 + " ms, p95 " +
              state.latencyMs.p95 + " ms",
          ];
          const shot = document.createElement("canvas");
          shot.width = width;
          shot.height = video.videoHeight + 24 * lines.length + 16;
          const g = shot.getContext("2d");
          g.fillStyle = "#111";
          g.fillRect(0, 0, shot.width, shot.height);
          g.drawImage(video, 0, 0);
          g.fillStyle = "#eee";
          g.font = "15px sans-serif";
          lines.forEach((line, index) => g.fillText(line, 8, video.videoHeight + 24 * (index + 1)));
          return shot.toDataURL("image/png");
        }

        async function finish() {
          await sample().catch((error) => { state.error = state.error || String(error); });
          state.done = true;
          if (query.get("snapshot") === "1" && video.videoWidth > 0) state.snapshot = snapshot();
          const summary = JSON.stringify(state);
          if (reportURL) {
            await fetch(reportURL, { method: "POST", mode: "no-cors", headers: { "Content-Type": "text/plain" },
              body: summary }).catch((error) => { state.error = String(error); });
          }
          endViewer();
          if (!state.error) setStatus("finished");
        }

        window.addEventListener("pagehide", endViewer);
        setInterval(() => sample().catch((error) => { state.error = String(error); }), 1000);
        start().then(() => {
          if (seconds > 0) setTimeout(finish, seconds * 1000);
        }).catch((error) => {
          setStatus("failed", error);
          if (reportURL) finish();  // a test waiting for the summary learns of the failure at once
        });
        </script>
        </body>
        </html>
        """#
}
