# Sourced by tools/device_train_round.sh and tools/device_train_face.sh on a lent GPU machine, with
# $assets, $work, $out and $gen_s set and $out made: sources tools/device_env.sh ($py), sets $cores,
# defines stamp (a timed line in $out/data.txt), unpacks the card faces and fonts into $work/assets
# and renders into $work/data the val scenes of the held-out decks (VAL_SEED, VAL_COUNT) and train
# scenes for $gen_s seconds (SEED, default $default_seed; $train_args: more make_dataset.py options),
# every core rendering. DECKS: make_dataset.py --decks (default all).
source tools/device_env.sh
cores=$(nproc)
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a "$out/data.txt"; }
rm -rf "$work" && mkdir -p "$work"
"$py" tools/pack_synth_assets.py --unpack "$assets" "$work/assets" | tee -a "$out/data.txt"
export CARDART_CACHE=$work/assets/cardart SYNTH_FONT_DIRS=$work/assets/fonts
decks=()
[ -z "${DECKS:-}" ] || decks=(--decks "$DECKS")
"$py" tools/make_dataset.py "${decks[@]}" --seed "${VAL_SEED:-73}" --count "${VAL_COUNT:-150}" --split val \
  --out "$work/data" --crops 0 --workers "$cores" | tee -a "$out/data.txt"
"$py" tools/make_dataset.py "${decks[@]}" --seed "${SEED:-$default_seed}" --count 1000000 --split train \
  --out "$work/data" --crops 0 --workers "$cores" "${train_args[@]}" --time-limit "$gen_s" | tee -a "$out/data.txt"
stamp "rendered"
