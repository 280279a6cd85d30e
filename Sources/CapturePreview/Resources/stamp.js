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
