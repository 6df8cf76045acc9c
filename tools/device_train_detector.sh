#!/usr/bin/env bash
# Train the corner detector on a GPU machine, several runs at once, from a packed dataset:
#
#   bash tools/device_train_detector.sh PACKED HOURS OUT NAME=INIT [NAME=INIT ...]
#
#   PACKED   folder from tools/pack_detector_data.py (train/ and val/, scenes 640 px wide), or a
#            .tgz of it (one file travels lighter than thousands of label files)
#   HOURS    time budget of each run (ultralytics' `time`: the epoch count is fitted to it)
#   OUT      where results.tar (weights and results.csv of every run) and the logs (NAME.log) go
#   NAME=INIT  a run: INIT is a checkpoint to fine-tune (the shipped detector rebuilt by
#            tools/weights_from_onnx.py --only detector, or an earlier run's best.pt), or
#            "scratch" for the network built from its YAML
#
# The runs share the CPU cores for data loading (the nets are tiny: loading, not the GPU, sets
# the pace). Each validates every epoch on PACKED/val (held-out decks) and keeps its best epoch.
# Made for the device tool's machines (no package registry there: tools/device_env.sh installs
# the wheels carried in .whl/). Settings by environment: LR (0.002),
# IMGSZ (640), BATCH (32), DEVICE (0; cpu for the smoke test in tests/test_training.py), WORK.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 4 ] || { echo "usage: $0 PACKED HOURS OUT NAME=INIT [NAME=INIT ...]" >&2; exit 2; }
packed=$(realpath "$1") hours=$2 out=$3
shift 3
device=${DEVICE:-0} imgsz=${IMGSZ:-640} batch=${BATCH:-32} lr=${LR:-0.002}
work=${WORK:-/tmp/device-detector}
mkdir -p "$out"
source tools/device_env.sh
if [ -f "$packed" ]; then  # an archive holding one folder
  rm -rf /tmp/packed-detector-data && mkdir -p /tmp/packed-detector-data
  tar -xzf "$packed" -C /tmp/packed-detector-data
  packed=$(find /tmp/packed-detector-data -mindepth 1 -maxdepth 1 -type d | head -n 1)
fi
cores=$(nproc)
workers=$(( cores / $# - 1 ))
[ "$workers" -ge 1 ] || workers=1
rm -rf "$work"
common=(--stages detector --det-time "$hours" --det-epochs 60 --det-imgsz "$imgsz" --det-batch "$batch"
        --det-lr "$lr" --det-val 1 --workers "$workers" --threads 2 --device "$device")
pids=() names=()
for spec in "$@"; do
  name=${spec%%=*} init=${spec#*=}
  # each run its own copy: ultralytics writes label caches beside the images
  mkdir -p "$work/$name"
  cp -r "$packed" "$work/$name/det"  # train.py writes its data.yaml
  from=()
  [ "$init" = scratch ] || from=(--det-init "$(realpath "$init")")
  "$py" tools/train.py --data "$work/$name/det" --work "$work/$name" "${from[@]}" "${common[@]}" \
    > "$out/$name.log" 2>&1 &
  pids+=($!) names+=("$name")
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=$?; done
tar -cf "$out/results.tar" -C "$work" --exclude='*/det' "${names[@]}"
for name in "${names[@]}"; do tail -n 3 "$out/$name.log"; done
exit $status
