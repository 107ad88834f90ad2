#!/usr/bin/env bash
# Builds the libFuzzer target (with ASan) and runs it for a bounded time, seeded from Fixtures/.
#   scripts/fuzz.sh [seconds]     (default 60; a crash fails the script and leaves crash-* files in .build-fuzz/)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
export VAULTFILE_FUZZ=1 SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0
swift build --sanitize=fuzzer --sanitize=address --product VaultFileFuzz --scratch-path .build-fuzz
bin="$(swift build --sanitize=fuzzer --sanitize=address --product VaultFileFuzz --scratch-path .build-fuzz --show-bin-path)/VaultFileFuzz"
corpus=.build-fuzz/corpus
mkdir -p "$corpus"
"$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=300000 \
  -artifact_prefix=.build-fuzz/ -print_final_stats=1 "$corpus" Fixtures/damaged Fixtures/v1
