#!/bin/bash -eu
# Builds flowc's cargo-fuzz targets for ClusterFuzzLite / OSS-Fuzz and packs
# each target's seed corpus. The base image's `cargo` wrapper adds the
# sanitizer and coverage flags ($SANITIZER, $RUSTFLAGS); locally the same
# script runs with OUT set (see README "Fuzzing"), using -s none when no
# sanitizer is asked for.
cd "${FLOWC_DIR:-$SRC/flowc}"
targets="ir_text mutant valid_ir program"
sanitizer_flag=()
if [ "${SANITIZER:-none}" = "none" ]; then
  sanitizer_flag=(-s none)
fi
cargo fuzz build --fuzz-dir fuzz/libfuzzer -O "${sanitizer_flag[@]}"
bin_dir=fuzz/libfuzzer/target/x86_64-unknown-linux-gnu/release
for t in $targets; do
  cp "$bin_dir/$t" "$OUT/"
  (cd "fuzz/libfuzzer/seeds/$t" && zip -q -r "$OUT/${t}_seed_corpus.zip" .)
done
