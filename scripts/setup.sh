#!/usr/bin/env bash
# One-step set-up for a fresh Debian 12 machine.
#   scripts/setup.sh run   install dependencies, build, and run Kiln on its bundled sample model
#   scripts/setup.sh test  install dependencies, build (warnings are errors), run the whole test suite
set -euo pipefail
cd "$(dirname "$0")/.."

mode="${1:-run}"
packages=(build-essential cmake ninja-build ccache pkg-config qt6-base-dev qt6-svg-dev libgraphviz-dev graphviz
          libprotobuf-dev protobuf-compiler libonnx-dev libsqlite3-dev libopenblas-dev zlib1g-dev
          xvfb xauth fonts-dejavu-core libonnx-testdata python3-onnx
          pybind11-dev python3-dev python3-numpy python3-pytest)

install_deps() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "setup: installing ${missing[*]}" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
  # Graphviz's plugin registry: without it `dot` layouts fail with 'Layout type "dot" not recognized'.
  if command -v libgvc6-config-update >/dev/null && [ "$(id -u)" -eq 0 ]; then libgvc6-config-update -c || true; fi
}

# Each phase says how long it took; with KILN_PHASE_LOG set (as .ci/run does) it also appends "name seconds" there.
phase() {
  local name="$1" t0=$SECONDS rc=0
  shift
  "$@" || rc=$?
  local took=$((SECONDS - t0))
  echo "setup: $name took ${took} s" >&2
  if [ -n "${KILN_PHASE_LOG:-}" ]; then echo "$name $took" >>"$KILN_PHASE_LOG"; fi
  return "$rc"
}

# build PRESET [TARGET...]: configure and build (all targets when none is named).
build() {
  local preset="$1"
  shift
  cmake --preset "$preset" >/dev/null
  if (($#)); then cmake --build --preset "$preset" --target "$@"; else cmake --build --preset "$preset"; fi
}

case "$mode" in
  run)
    phase "install dependencies" install_deps
    # Only what this command runs: the app and its bundled sample, not the test suites.
    phase "build kiln" build default kiln_samples
    sample=build/resources/samples/mobilenetv2.onnx
    if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
      echo "setup: built. Opening the workbench on the bundled sample ($sample)" >&2
      exec build/app/kiln "$sample"
    fi
    # No display: the same compile, headless, as a report on the terminal.
    echo "setup: built. No display, so a headless report on the bundled sample ($sample)" >&2
    echo "       (for the window: xvfb-run -a build/app/kiln $sample, or run this on a desktop)" >&2
    build/app/kiln inspect "$sample"
    exec build/app/kiln compile "$sample"
    ;;
  test)
    phase "install dependencies" install_deps
    phase "build (ci preset)" build ci
    phase "test suite (ci preset)" ctest --preset ci
    ;;
  *)
    echo "usage: scripts/setup.sh run|test" >&2
    exit 2
    ;;
esac
