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
    if (Array.isArray(f.viewerLayers)) {  // simulcast: each viewer's layer, in the order they joined
      rows.push(["viewers' layers", f.viewerLayers.map((v) => v.layer == null ? "waiting"
        : "layer " + v.layer + " " + v.width + "\u00d7" + v.height + " (" + v.estimateKbps + " kbit/s)")
        .join("; ")]);
    }
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
