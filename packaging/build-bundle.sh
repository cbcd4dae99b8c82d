#!/usr/bin/env bash
# Build the standalone one-folder bundle (PyInstaller, packaging/fxscope.spec) and check that it starts.
#
#   packaging/build-bundle.sh [DISTDIR]      # default DISTDIR: dist/  ->  dist/fxscope/fxscope
#
# Uses a build venv of its own ($FXSCOPE_BUNDLE_VENV, default build/bundle-venv; created on first use, needs
# PyPI) and a work directory ($FXSCOPE_BUNDLE_WORK, default build/bundle) holding PyInstaller and fxscope installed from a freshly built wheel, so the bundle carries exactly what
# the wheel installs. Prints the bundle's size, then runs `fxscope --version` and an offscreen screenshot of the
# bundled demo from outside the source tree with the time each took.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIST=$(mkdir -p "${1:-$ROOT/dist}" && cd "${1:-$ROOT/dist}" && pwd)
VENV=${FXSCOPE_BUNDLE_VENV:-$ROOT/build/bundle-venv}
WORK=${FXSCOPE_BUNDLE_WORK:-$ROOT/build/bundle}
PYTHON=${PYTHON:-python3}

mkdir -p "$(dirname "$VENV")"
if command -v flock >/dev/null 2>&1; then  # two builds at once (a test and a developer) share the venv
    exec 9>"$VENV.lock"
    flock 9
fi
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
rm -rf "$WORK" && mkdir -p "$WORK/src" "$WORK/wheel"
# build the wheel from a copy, so the build leaves nothing in the source tree
tar -C "$ROOT" --exclude=./.git --exclude=./.venv --exclude=./build --exclude=./dist --exclude='*.egg-info' \
    --exclude=__pycache__ --exclude='*.so' -cf - . | tar -C "$WORK/src" -xf -
"$VENV/bin/pip" install -q 'pyinstaller>=6.0' 'setuptools>=77' wheel
"$VENV/bin/pip" wheel -q --no-deps --no-build-isolation -w "$WORK/wheel" "$WORK/src"
wheel_file=$(ls "$WORK"/wheel/fxscope-*.whl)
"$VENV/bin/pip" install -q "$wheel_file"                                 # dependencies
"$VENV/bin/pip" install -q --force-reinstall --no-deps "$wheel_file"     # this build, even at the same version

start=$(date +%s)
"$VENV/bin/pyinstaller" --noconfirm --clean --log-level WARN \
    --distpath "$DIST" --workpath "$WORK/pyinstaller" "$ROOT/packaging/fxscope.spec"
echo "build-bundle: PyInstaller took $(( $(date +%s) - start )) s"

bundle=$DIST/fxscope
echo "build-bundle: $bundle: $(du -sh "$bundle" | cut -f1) ($(find "$bundle" -type f | wc -l) files)"

# smoke test from an empty directory, with no Python variables that could point back at a source tree
check=$(mktemp -d)
trap 'rm -rf "$check"' EXIT
cd "$check"
timed() {  # timed LABEL CMD...: run CMD (its stdout to ours), print its wall time in ms
    local label=$1 t0 t1; shift
    t0=$(date +%s%N); "$@"; t1=$(date +%s%N)
    echo "build-bundle: $label: $(( (t1 - t0) / 1000000 )) ms" >&2
}
timed "fxscope --version" env -u PYTHONPATH -u PYTHONHOME "$bundle/fxscope" --version
timed "fxscope screenshot (demo, offscreen)" env -u PYTHONPATH -u PYTHONHOME QT_QPA_PLATFORM=offscreen \
    FXSCOPE_NEW_INSTANCE=1 "$bundle/fxscope" screenshot -o "$check/demo.png"
timed "fxscope info (bundled demo)" env -u PYTHONPATH -u PYTHONHOME "$bundle/fxscope" info \
    "$(find "$bundle" -path '*/resources/demo/demo.fxt' | head -1)" > "$check/info.txt"
grep -q "^records" "$check/info.txt" || { echo "build-bundle: fxscope info printed no records:" >&2; cat "$check/info.txt" >&2; exit 1; }
[ -s "$check/demo.png" ] || { echo "build-bundle: no screenshot written" >&2; exit 1; }
echo "build-bundle: screenshot $(stat -c %s "$check/demo.png") bytes; bundle ready: $bundle/fxscope"
