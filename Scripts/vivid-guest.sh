#!/bin/sh
# Runs INSIDE the vivid guest (Scripts/test-vivid boots it with Scripts/vivid-vm): writes the v4l2-ctl reference
# artifacts to /out, then runs the test bundle's vivid suites against /dev/video0.
#
#   sh /vivid-guest.sh TEST_BUNDLE
#
# /out afterwards holds:
#   v4l2ctl-formats.txt     `v4l2-ctl --list-formats-ext` of /dev/video0
#   v4l2ctl-640x480.yuyv    one raw YUYV 640x480 frame captured by v4l2-ctl, vivid's OSD text off
#   probe-formats.txt       `capturer-probe formats` (only when /usr/local/bin/capturer-probe is present)
#   whatever the guest suites write (CAPTURE_VIVID_OUT=/out), e.g. ours-640x480.nv12
#   guest-status.txt        one line per step: "<step> <exit status>"
# Exit status: non-zero when the test bundle failed (or could not run), or a reference step failed.
set -u

bundle=${1:-}
device=${VIVID_DEVICE:-/dev/video0}
out=${CAPTURE_VIVID_OUT:-/out}
mkdir -p "$out"
status_file="$out/guest-status.txt"
: > "$status_file"
failed=0

# Runs a step, records its status, and remembers failure. $1 is the step name; the rest is the command.
step() {
  name=$1
  shift
  echo "== vivid-guest: $name"
  "$@"
  rc=$?
  echo "$name $rc" >> "$status_file"
  if [ "$rc" -ne 0 ]; then
    echo "== vivid-guest: $name FAILED (exit $rc)"
    failed=1
  fi
  return "$rc"
}

# The reference frame and the guest suites both see vivid without its text overlay (timecode, counters), so two
# captures of the static 75% colour bars are comparable. The control value 2 is "None" in vivid's "OSD Text Mode".
step osd-off v4l2-ctl -d "$device" -c osd_text_mode=2

step formats sh -c "v4l2-ctl -d '$device' --list-formats-ext > '$out/v4l2ctl-formats.txt'"

# 25 fps is the fastest 640x480 rate; two skipped frames let the generator settle after the format change.
step reference-frame v4l2-ctl -d "$device" --set-fmt-video=width=640,height=480,pixelformat=YUYV --set-parm=25 \
  --stream-mmap --stream-skip=2 --stream-count=1 --stream-to="$out/v4l2ctl-640x480.yuyv"

if [ -x /usr/local/bin/capturer-probe ]; then
  step probe-formats sh -c "/usr/local/bin/capturer-probe formats --device '$device' > '$out/probe-formats.txt'"
else
  echo "== vivid-guest: capturer-probe not in the guest; probe-formats.txt not produced"
fi

if [ -z "$bundle" ]; then
  echo "== vivid-guest: FAILED: no test bundle given"
  echo "swift-tests 2" >> "$status_file"
  exit 2
elif [ ! -x "$bundle" ]; then
  echo "== vivid-guest: FAILED: test bundle $bundle is missing or not executable"
  echo "swift-tests 2" >> "$status_file"
  exit 2
fi
# The vivid suites run one after the other, never in parallel: they share one device, the backend suite counts this
# process's open descriptors, and its last test disconnects vivid (removing /dev/video0). So the capturer-probe suite
# runs first, then the controls suite (which restores every control it changes: the backend suite compares frames
# with the reference taken above), the churn suite, the hot-plug suite (it unloads and reloads vivid with rmmod/insmod,
# once with n_devs=2, and leaves it loaded with the boot options and /dev/video0 present), then the fault suite, which
# injects vivid's errors and resets each control it changes; its last tests disconnect vivid and reload the module,
# so /dev/video0 is back, with OSD text off again, for the backend suite after it. Exit status 69 means no test
# matched: the bundle lacks that suite.
run_suite() {
  name=$1
  suite=$2
  step "$name" env NO_COLOR=1 TERM=dumb CAPTURE_VIVID_GUEST=1 CAPTURE_VIVID_OUT="$out" VIVID_DEVICE="$device" \
    "$bundle" --testing-library swift-testing --filter "$suite"
  [ "$rc" -eq 69 ] && echo "== vivid-guest: FAILED: the test bundle has no suite matching $suite"
  return 0
}
run_suite swift-tests-probe VividProbeTests
run_suite swift-tests-controls VividControlsTests
run_suite swift-tests-churn VividChurnTests
run_suite swift-tests-hotplug VividHotplugTests
run_suite swift-tests-faults VividFaultTests
run_suite swift-tests-backend VividGuestTests

ls -l "$out"
exit "$failed"
