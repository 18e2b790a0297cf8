#!/usr/bin/env bash
# The profkit Python package as a user gets it: builds the abi3 wheel once with maturin, installs
# it with `pip install <wheel>` into a fresh venv where no Rust toolchain is on the path, and runs
# the pytest files here on the conformance cases with that venv's pyarrow, pandas, pytest,
# protobuf and tqdm (test_profkit.py: the CLI's answers and errors; test_protobuf_peer.py: Python
# protobuf's view of every XSpace case; test_limits.py: hostile inputs and gzip bombs;
# test_large.py: a large file streamed with bounded memory).
#
# Usage: conformance/python/check.sh [pytest args]     (from anywhere in the repository)
# The build venv (maturin) lives in <repo>/.oracle/python (git-ignored) and is reused when it has
# the pinned version, so CI can cache it; PYTHON_VENV names another. The wheel is rebuilt on every
# run, into $CARGO_TARGET_DIR/wheels (target/wheels by default). The test venv,
# <repo>/.oracle/wheel-install, is made anew on every run: only the wheel and what pip resolves
# for it from PyPI, then the test tools. What the tests need from Rust (the hostile inputs, the
# example plugin) is built before the toolchain leaves the path.
# PROFKIT_PY_LARGE_MB sizes the large file (512 by default; the benchmark uses several GB).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${PYTHON_VENV:-$repo/.oracle/python}"
fresh="$repo/.oracle/wheel-install"
build_pins=(maturin==1.16.0)
test_pins=(pyarrow==26.0.1 pandas==3.1.1 pytest==9.2.0 protobuf==7.36.2 grpcio-tools==1.85.1 tqdm==4.70.1)

has_clients() {
    "$venv/bin/python" - "${build_pins[@]}" <<'PY' >/dev/null 2>&1
import sys
from importlib.metadata import version
sys.exit(0 if all(version(p.split("==")[0]) == p.split("==")[1] for p in sys.argv[1:]) else 1)
PY
}

if ! has_clients; then
    echo "installing ${build_pins[*]} into $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet "${build_pins[@]}"
    has_clients || { echo "maturin did not install into $venv" >&2; exit 1; }
fi

cd "$repo"
target="${CARGO_TARGET_DIR:-$repo/target}"
wheels="$target/wheels"
rm -f "$wheels"/profkit-*.whl
# Release: the large-file test streams hundreds of megabytes.
"$venv/bin/maturin" build --quiet --release -m crates/profkit-python/Cargo.toml -o "$wheels" -i "$venv/bin/python"
wheel="$(ls "$wheels"/profkit-*.whl)"
# One wheel for every CPython from 3.9 (pyo3's abi3-py39): tagged cp39-abi3.
case "$(basename "$wheel")" in
    *-cp39-abi3-*) echo "wheel: $(basename "$wheel")" ;;
    *) echo "not an abi3 wheel: $wheel" >&2; exit 1 ;;
esac

# What the tests take from Rust, made while cargo is still on the path.
inputs="$target/python-check"
rm -rf "$inputs"
mkdir -p "$inputs/hostile"
export PROFKIT_PY_HOSTILE_BYTES="${PROFKIT_PY_HOSTILE_BYTES:-$((2 << 20))}"
export PROFKIT_PY_BOMB_MEMBERS="${PROFKIT_PY_BOMB_MEMBERS:-128}"
cargo run -q -p conformance --bin make-hostile-cases -- \
    "$inputs/hostile" "$PROFKIT_PY_HOSTILE_BYTES" "$PROFKIT_PY_BOMB_MEMBERS"
cargo build -q -p profkit-plugin-example
export PROFKIT_PY_HOSTILE_DIR="$inputs/hostile"
export PROFKIT_PY_PLUGIN="$target/debug/libprofkit_plugin_example.so"

# The path without the Rust toolchain: every directory holding cargo, rustc, rustup or maturin
# left out, and cargo's and rustup's variables unset.
no_rust_path=""
IFS=: read -r -a dirs <<<"$PATH"
for dir in "${dirs[@]}"; do
    [[ -n "$dir" ]] || continue
    for tool in cargo rustc rustup maturin; do
        [[ -x "$dir/$tool" ]] && continue 2
    done
    no_rust_path="${no_rust_path:+$no_rust_path:}$dir"
done
no_rust=(env -u CARGO_HOME -u RUSTUP_HOME -u RUSTUP_TOOLCHAIN -u CARGO_TARGET_DIR -u RUSTC -u CARGO "PATH=$no_rust_path")
if "${no_rust[@]}" bash -c 'command -v cargo || command -v rustc' >/dev/null; then
    echo "cargo or rustc is still on the path without Rust: $no_rust_path" >&2
    exit 1
fi

python="$("$venv/bin/python" -c 'import sys; print(sys._base_executable)')"
"${no_rust[@]}" "$python" -m venv --clear "$fresh"
# Binary packages only: nothing may be compiled on the way in.
"${no_rust[@]}" "$fresh/bin/python" -m pip install --quiet --only-binary=:all: "$wheel"
"${no_rust[@]}" "$fresh/bin/python" - conformance/xplane/sample-myhost/input.xplane.pb <<'PY'
import sys
import profkit
table = profkit.events(sys.argv[1])
print(f"installed wheel: profkit {profkit.__version__} read {table.num_rows} events without Rust")
PY
"${no_rust[@]}" "$fresh/bin/python" -m pip install --quiet --only-binary=:all: "${test_pins[@]}"

cd "$here"
exec "${no_rust[@]}" "$fresh/bin/python" -m pytest -q -p no:cacheprovider "$@" .
