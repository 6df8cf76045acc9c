#!/usr/bin/env bash
# The face classifier (models/face_classifier.onnx) fine-tuned on a lent GPU machine: render fresh
# scenes there, on its many cores, cut the face crops, and train for a fixed time:
#
#   bash tools/device_train_face.sh ASSETS GEN_SECONDS HOURS OUT INIT
#
#   ASSETS       tools/pack_synth_assets.py's archive (card faces and fonts: the machine has neither)
#   GEN_SECONDS  how long to render train scenes (~45 a second on 16 cores)
#   HOURS        training time (ultralytics' `time`; the best epoch on the held-out decks' crops is kept)
#   OUT          where results.tar (best.pt, results.csv), the logs and data.txt go
#   INIT         the face net to start from (tools/weights_from_onnx.py --only classifier over a folder
#                whose card_classifier.onnx is the face net; models/MODEL_HISTORY.md says how)
#
# Val crops come from the held-out decks (VAL_SEED's scenes). Settings by environment: SEED (171;
# train scenes), VAL_SEED (73), VAL_COUNT (150), LR (0.0005), BATCH (256), DECKS (make_dataset.py
# --decks; default all), DEVICE (0; cpu for the smoke test in tests/test_training.py), WORK
# (/tmp/device-face), PYTHON.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 5 ] || { echo "usage: $0 ASSETS GEN_SECONDS HOURS OUT INIT" >&2; exit 2; }
assets=$(realpath "$1") gen_s=$2 hours=$3 out=$4 init=$(realpath "$5")
work=${WORK:-/tmp/device-face}
mkdir -p "$out"
out=$(realpath "$out")
default_seed=171 train_args=()
source tools/device_scenes.sh
"$py" tools/train_face.py --data "$work/data" --val "$work/data" --work "$work/face" --stages crops \
  --processes "$cores" | tee -a "$out/data.txt"
stamp "cut"
status=0
"$py" tools/train_face.py --data "$work/data" --val "$work/data" --work "$work/face" --stages train \
  --init "$init" --epochs 60 --hours "$hours" --lr "${LR:-0.0005}" --batch "${BATCH:-256}" \
  --workers $(( cores - 1 )) --device "${DEVICE:-0}" > "$out/train.log" 2>&1 || status=$?
stamp "trained (exit $status)"
# best.pt and the figures alone: the epoch checkpoints (save_period) outgrow what a call brings back
tar -cf "$out/results.tar" -C "$work/face" train/weights/best.pt train/results.csv train/args.yaml || status=$?
tail -n 4 "$out/train.log" || true
exit $status
