#!/usr/bin/env bash
# The real client for profkit-plugin: TensorFlow 2.21.0 (tensorflow-cpu) loads the example plugin
# (crates/profkit-plugin-example) through TF_PLUGGABLE_DEVICE_LIBRARY_PATH, profiles a few matmuls
# with tf.profiler.experimental.start/stop, and profkit checks that the .xplane.pb TensorFlow wrote
# holds the plugin's plane with its events; then the same with profkit-tracing's plugin bridge
# (crates/profkit-tracing-plugin-example), whose Rust library's spans must be in TensorFlow's host
# plane. Prints one line per check and `N passed, M failed`.
#
# Usage: conformance/tensorflow/check.sh        (from anywhere in the repository)
# The venv lives in <repo>/.oracle/tensorflow (git-ignored) and is reused when it already imports
# TensorFlow 2.21.0, so CI can cache it. Set TF_VENV to use another one. Creating it downloads a
# 274 MB wheel; afterwards the check runs offline.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${TF_VENV:-$repo/.oracle/tensorflow}"
version="2.21.0"

has_tensorflow() {
    TF_CPP_MIN_LOG_LEVEL=3 "$venv/bin/python" - "$version" <<'PY' >/dev/null 2>&1
import sys
import tensorflow as tf
sys.exit(0 if tf.__version__ == sys.argv[1] else 1)
PY
}

if ! has_tensorflow; then
    echo "installing tensorflow-cpu $version into $venv"
    python="$(command -v python3.11 || command -v python3)"
    "$python" -m venv "$venv"
    "$venv/bin/pip" install --quiet "tensorflow-cpu==$version"
    has_tensorflow || { echo "tensorflow-cpu $version did not install into $venv" >&2; exit 1; }
fi

cd "$repo"
cargo build --quiet -p profkit -p profkit-plugin-example -p profkit-tracing-plugin-example
target="$(cargo metadata --format-version 1 --no-deps \
    | "$venv/bin/python" -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
exec "$venv/bin/python" "$here/check.py" \
    --plugin "$target/debug/libprofkit_plugin_example.so" \
    --profkit "$target/debug/profkit" \
    --tracing-plugin "$target/debug/libprofkit_tracing_plugin_example.so"
