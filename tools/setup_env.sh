#!/usr/bin/env bash
# Set up everything the project needs on a fresh Debian machine, from the project's own files.
#   bash tools/setup_env.sh app    -> system libraries for Qt + .venv with the app (no torch)
#   bash tools/setup_env.sh test   -> the above + training stack (CPU torch) + test tools
# Idempotent: a second run installs nothing new.
set -euo pipefail
mode="${1:-test}"
cd "$(dirname "$0")/.."

# Debian packages: Qt's xcb plugin libraries, Xvfb (GUI tests, screenshots), card art and
# SVG rendering for the synthetic data generator.
debs="xvfb xauth libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0
      libxcb-randr0 libxcb-shape0 libxcb-xinerama0 libxkbcommon-x11-0 libxkbcommon0 libgl1 libegl1
      libfontconfig1 libglib2.0-0 libdbus-1-3 fonts-dejavu-core gcc"
# The solver's C core builds at install time (it falls back to pure Python without a compiler).
if [ "$(command -v ${PYTHON:-python3})" = /usr/bin/python3 ]; then debs="$debs python3-dev python3-venv"; fi
if [ "$mode" = test ]; then
  debs="$debs gnome-cards-data kdegames-card-data-kf5 librsvg2-bin fonts-liberation fonts-freefont-ttf
        fonts-urw-base35 fonts-noto-core"
fi
missing=""
for p in $debs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "installing Debian packages:$missing"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
  else
    echo "warning: missing Debian packages (run as root or: sudo apt-get install$missing)" >&2
  fi
fi

python=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$python" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
if [ "$mode" = app ]; then
  extras="app"
else
  extras="app,train,test"
fi
# constraints.txt pins the CPU torch wheel: anything else pulls gigabytes of CUDA packages.
.venv/bin/python -m pip install -q -c constraints.txt -e ".[$extras]"
