#!/usr/bin/env bash
# One training round on a lent GPU machine: render fresh scenes there, on its many cores, cut the
# classifier's crops, and train the corner detector and the index classifier side by side:
#
#   bash tools/device_train_round.sh ASSETS GEN_SECONDS HOURS OUT DET_INIT CLS_INIT
#
#   ASSETS       tools/pack_synth_assets.py's archive (card faces and fonts: the machine has neither)
#   GEN_SECONDS  how long to render train scenes (they are written as they finish; ~4 a second a core)
#   HOURS        time budget of each training (ultralytics' `time`; the best epoch on val is kept)
#   OUT          where results.tar (weights and results.csv of both runs), the logs and data.txt go
#   DET_INIT     detector checkpoint to fine-tune (e.g. models/candidates/detector-gpu-ft2.pt); "-": no detector
#   CLS_INIT     classifier checkpoint (tools/weights_from_onnx.py --only classifier)
#
# Carrying rendered scenes caps a round at ~1,800 scenes shrunk for the detector (64 MiB a call);
# rendering them there gives the classifier its full-resolution crops too, and as many scenes as
# the time allows. Val scenes come from the held-out decks (seed VAL_SEED) and pick each run's
# best epoch. Settings by environment: SEED (71; train scenes), VAL_SEED (73), VAL_COUNT (150),
# CLOSE_UP (0.06), DET_LR (0.001), CLS_LR (0.001), DET_BATCH (32), CLS_BATCH (128), DET_IMGSZ (640),
# DECKS (make_dataset.py --decks; default all), DEVICE (0; cpu for the smoke test), WORK (/tmp/device-round),
# PREPARE_ARGS (more train.py options for cutting the crops, e.g. "--cls-turn").
# CLS_VARIANTS trains several classifiers side by side on the same crops instead of one, each
# "name:option,option" (train.py options, e.g. "base: hue:--cls-hue=0.5 all:--cls-hue=0.5,--cls-min-px=0"),
# into results-NAME.tar; the detector, unless "-", trains beside them.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 6 ] || { echo "usage: $0 ASSETS GEN_SECONDS HOURS OUT DET_INIT CLS_INIT" >&2; exit 2; }
assets=$(realpath "$1") gen_s=$2 hours=$3 out=$4 det_init=$5 cls_init=$(realpath "$6")
[ "$det_init" = "-" ] || det_init=$(realpath "$det_init")
work=${WORK:-/tmp/device-round}
mkdir -p "$out"
out=$(realpath "$out")
default_seed=71 train_args=(--close-up "${CLOSE_UP:-0.06}")
source tools/device_scenes.sh
read -ra prepare_args <<< "${PREPARE_ARGS:-}"
"$py" tools/train.py --data "$work/data" --work "$work/run" --stages prepare --crops 1 \
  --prepare-processes "$cores" "${prepare_args[@]}" > "$out/prepare.log" 2>&1
stamp "prepared: $(find "$work/run/cls/train" -name '*.jpg' | wc -l) train crops"
det_args=(--det-init "$det_init" --det-time "$hours" --det-epochs 60 --det-imgsz "${DET_IMGSZ:-640}"
  --det-batch "${DET_BATCH:-32}" --det-lr "${DET_LR:-0.001}" --det-val 1)
cls_args=(--cls-init "$cls_init" --cls-time "$hours" --cls-epochs 60 --cls-batch "${CLS_BATCH:-128}"
  --cls-lr "${CLS_LR:-0.001}" --cls-min-px 12 --crops 1)
status=0
if [ -z "${CLS_VARIANTS:-}" ]; then
  # Both stages at once (train.py runs the classifier in a second process); loaders share the cores.
  workers=$(( cores / 2 - 1 ))
  [ "$workers" -ge 1 ] || workers=1
  "$py" tools/train.py --data "$work/data" --work "$work/run" --stages detector,classifier "${det_args[@]}" \
    "${cls_args[@]}" --workers "$workers" --threads 2 --device "${DEVICE:-0}" > "$out/train.log" 2>&1 || status=$?
  stamp "trained (exit $status)"
  cp "$work/run/classifier.log" "$out/" 2>/dev/null || true
  tar -cf "$out/results.tar" -C "$work/run" --exclude='*.jpg' detector classifier info.json 2>/dev/null || status=$?
else
  read -ra variants <<< "$CLS_VARIANTS"
  jobs=${#variants[@]}
  [ "$det_init" = "-" ] || jobs=$(( jobs + 1 ))
  workers=$(( cores / jobs - 1 ))
  [ "$workers" -ge 1 ] || workers=1
  pids=()
  if [ "$det_init" != "-" ]; then
    "$py" tools/train.py --data "$work/data" --work "$work/run" --stages detector "${det_args[@]}" --crops 1 \
      --workers "$workers" --threads 2 --device "${DEVICE:-0}" > "$out/train.log" 2>&1 & pids+=($!)
  fi
  for v in "${variants[@]}"; do
    name=${v%%:*} opts=${v#*:}
    mkdir -p "$work/cls-$name" && ln -sfn "$work/run/cls" "$work/cls-$name/cls"
    IFS=, read -ra extra <<< "$opts"
    "$py" tools/train.py --data "$work/data" --work "$work/cls-$name" --stages classifier "${cls_args[@]}" "${extra[@]}" \
      --workers "$workers" --threads 2 --device "${DEVICE:-0}" > "$out/classifier-$name.log" 2>&1 & pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || status=$?; done
  stamp "trained (exit $status)"
  [ "$det_init" = "-" ] || tar -cf "$out/results.tar" -C "$work/run" --exclude='*.jpg' detector info.json || status=$?
  for v in "${variants[@]}"; do
    name=${v%%:*}
    # best.pt alone: a wider net's best and last together outgrow what a call brings back (16 MiB a file)
    tar -cf "$out/results-$name.tar" -C "$work/cls-$name" --exclude='*.jpg' --exclude=last.pt classifier info.json \
      || status=$?
  done
fi
tail -n 4 "$out"/*.log 2>/dev/null || true
exit $status
