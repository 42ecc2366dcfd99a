#!/bin/bash -eu
# Build the cargo-fuzz targets of fuzz/ as they are, with their committed
# corpora as seed corpora (ClusterFuzzLite / OSS-Fuzz conventions: binaries,
# NAME_seed_corpus.zip and an optional NAME.dict in $OUT).
cd "$SRC/torchspec"
# cargo-fuzz adds the sanitizer flags from $SANITIZER via the environment
# OSS-Fuzz sets; --debug-assertions keeps the reference's internal checks.
cargo fuzz build -O --debug-assertions
built=fuzz/target/x86_64-unknown-linux-gnu/release
for target in lookup case_line program; do
  cp "$built/$target" "$OUT/"
  if [ -d "fuzz/corpus/$target" ] && [ -n "$(ls -A "fuzz/corpus/$target")" ]; then
    (cd "fuzz/corpus/$target" && zip -q -r "$OUT/${target}_seed_corpus.zip" .)
  fi
  if [ -f "fuzz/$target.dict" ]; then
    cp "fuzz/$target.dict" "$OUT/$target.dict"
  fi
done
