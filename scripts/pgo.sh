#!/usr/bin/env bash
# Profile-guided build of dcsim: the same source and the same results, a faster binary.
#
#   scripts/pgo.sh
#
# 1. Builds an instrumented release binary (`-Cprofile-generate`) in target/pgo/gen.
# 2. Runs it on the training set below, which counts how often each branch and call of the
#    engine is taken. The set covers every scheme on the paper fat tree (HPCC also on two
#    threads), TCP with CUBIC, Prague and fq_codel (`dcsim harm`), and the buffer study's RPCs
#    over TCP and RoCE with the queue monitors. It holds none of the calibration inputs
#    (`../shared/reference/calibration`), which issue 14's one-core target is measured on, and
#    runs the fat tree with another seed than `cargo bench --bench reference` does.
# 3. Merges the counts with the toolchain's `llvm-profdata` (`rustup component add
#    llvm-tools`) and builds the release binary again with them (`-Cprofile-use`), with fat
#    LTO and one codegen unit, in target/pgo/use: `target/pgo/use/release/dcsim`, and the
#    reference bench `target/pgo/use/release/deps/reference-*` (run it as `cargo bench` does,
#    with `--bench`).
#
# The profile steers code layout, inlining and branch order only: outputs are byte-identical
# to a plain build's (check with scripts/gate.sh). The separate target folder keeps the plain
# build's cache. Extra RUSTFLAGS are kept. Takes two LTO release builds and about a minute of
# training (about 15 minutes on a 2-core VM). Figures: docs/performance.md, "Profile-guided
# builds".
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -gt 0 ]; then
    echo "usage: scripts/pgo.sh" >&2
    exit 2
fi

host=$(rustc -vV | sed -n 's/^host: //p')
profdata=$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata
if [ ! -x "$profdata" ]; then
    echo "error: no llvm-profdata at $profdata: install it with \`rustup component add llvm-tools\`" >&2
    exit 2
fi

# Whole-program optimization on top of the profile: one codegen unit, fat LTO (each can be
# overridden from the environment). Both builds must use the same settings: they are part of
# every crate's hash, and so of the symbol names the profile is matched by.
export CARGO_PROFILE_RELEASE_LTO=${CARGO_PROFILE_RELEASE_LTO:-fat}
export CARGO_PROFILE_RELEASE_CODEGEN_UNITS=${CARGO_PROFILE_RELEASE_CODEGEN_UNITS:-1}

work=$PWD/target/pgo
rm -rf "$work/raw" "$work/train" "$work/merged.profdata"
mkdir -p "$work/raw" "$work/train"
flags=${RUSTFLAGS:-}

echo "== instrumented build (target/pgo/gen; lto = $CARGO_PROFILE_RELEASE_LTO, codegen-units = $CARGO_PROFILE_RELEASE_CODEGEN_UNITS)"
# Both builds make the binary and the reference bench in one invocation, so that every crate is
# built with the same features (the bench's dev-dependencies widen some: `either`, `memchr`) and
# so with the same symbol names, which is how a profile finds its functions.
targets=(--bin dcsim --bench reference)
RUSTFLAGS="$flags -Cprofile-generate=$work/raw" \
    cargo build --release --quiet "${targets[@]}" --target-dir "$work/gen"
gen=$work/gen/release/dcsim
train=$work/train

echo "== training"
run() {
    local name=$1
    shift
    echo "   $name: dcsim $*"
    "$gen" "$@" > "$train/$name.log" 2>&1 || { cat "$train/$name.log" >&2; exit 1; }
}
run fattree-hpcc-1 run examples/perf/fattree-2ms.toml --seed 2 --quiet --out "$train/ft1"
run fattree-hpcc-2 run examples/perf/fattree-2ms.toml --seed 2 --threads 2 --quiet --out "$train/ft2"
run schemes sweep examples/perf/pgo-schemes.toml --jobs 2 --out "$train/schemes"
run harm harm --rtt 10ms,80ms --flows 150 --jobs 2 --out "$train/harm"
run buffer sweep examples/perf/pgo-buffer.toml --jobs 2 --out "$train/buffer"

echo "== merge"
"$profdata" merge -o "$work/merged.profdata" "$work/raw"

echo "== optimized build (target/pgo/use)"
RUSTFLAGS="$flags -Cprofile-use=$work/merged.profdata" \
    cargo build --release --quiet "${targets[@]}" --target-dir "$work/use"
echo "profile-guided binary: target/pgo/use/release/dcsim"
echo "profile-guided bench: $(ls -t "$work"/use/release/deps/reference-* | grep -v '\.d$' | head -n 1) --bench"
