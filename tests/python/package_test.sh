#!/usr/bin/env bash
# The Python package, as a user gets it: a wheel built from the repository
# (`pip wheel`, scikit-build-core: it reuses BUILD_DIR and ccache, and builds
# only the thund target), installed into a fresh virtual environment, then
# tests/python/package_test.py drives thund.run / thund.read /
# thund.write_parquet there. The wheel is built once per build tree
# (BUILD_DIR/python-dist) and rebuilt when the thund binary is newer.
# Usage: package_test.sh BUILD_DIR SOURCE_DIR    (needs PyPI for the first build)
set -euo pipefail
build="$(cd "$1" && pwd)"; src="$(cd "$2" && pwd)"
py="$src/.deps/venv/bin/python"
[[ -x "$py" ]] || py=python3
dist="$build/python-dist"
wheel="$(ls -t "$dist"/thund-*.whl 2>/dev/null | head -1 || true)"
if [[ -z "$wheel" || "$build/thund" -nt "$wheel" ]]; then
  rm -rf "$dist"
  start=$(date +%s)
  # build-dir: this build tree (pyproject.toml names build/, the default tree).
  "$py" -m pip wheel --no-deps --disable-pip-version-check -q -w "$dist" \
    --config-settings=build-dir="$build" "$src"
  echo "wheel built in $(( $(date +%s) - start )) s"
  wheel="$(ls -t "$dist"/thund-*.whl | head -1)"
fi
echo "wheel: $(basename "$wheel") ($(du -m "$wheel" | cut -f1) MB)"
work="$(mktemp -d "${TMPDIR:-/tmp}/thund-pip-XXXXXX")"
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
"$py" -m venv "$work/venv"
"$work/venv/bin/pip" install --disable-pip-version-check -q "$wheel"
echo "fresh venv + pip install in $(( $(date +%s) - start )) s"
cd "$work"  # not the source tree: `import thund` must come from the venv
THUND_SOURCE_DIR="$src" "$work/venv/bin/python" "$src/tests/python/package_test.py"
