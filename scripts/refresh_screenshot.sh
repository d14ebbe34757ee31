#!/usr/bin/env bash
# Refreshes the README's picture of the workbench (docs/workbench.png) from the GUI test that draws it:
# test_main_window's readmeScreenshot opens ../shared/models/cnn/light_resnet50.onnx offscreen at the default window
# size, selects a fused convolution at GraphFusion and saves the window. Needs a built tree (`cmake --preset ci`).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
cmake --build "$build" --target test_main_window
QT_QPA_PLATFORM=offscreen "$build/tests/test_main_window" readmeScreenshot
cp "$build/tests/artifacts/readme_workbench.png" docs/workbench.png
echo "docs/workbench.png refreshed" >&2
