# Sourced by the tools/device_*.sh scripts on a lent GPU machine (no package registry there):
# wheels found in .whl/ are installed to /tmp/site, and a missing polars (only read by ultralytics
# to summarise results.csv into the checkpoint) is replaced by a stub. Sets $py.
py=${PYTHON:-python3}
mkdir -p /tmp/site
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
if compgen -G ".whl/*.whl" >/dev/null; then
  "$py" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
fi
if ! "$py" -c "import polars" 2>/dev/null; then
  mkdir -p /tmp/site/polars
  printf 'def read_csv(*args, **kwargs):\n    raise RuntimeError("polars stub: not installed")\n' \
    > /tmp/site/polars/__init__.py
fi
