#!/usr/bin/env bash
# The README's app command: set up (first run only) and open Pyramid Companion.
# With no webcam it opens on the bundled demo video.
set -euo pipefail
cd "$(dirname "$0")"
bash tools/setup_env.sh app
exec .venv/bin/pyramid-companion "$@"
