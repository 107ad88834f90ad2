#!/usr/bin/env bash
# Builds the libFuzzer target (with ASan) and runs it for a bounded time, seeded from Fixtures/.
#   scripts/fuzz.sh [seconds]     (default 60; a crash fails the script and leaves crash-* files in .build-fuzz/)
# VAULTFILE_FUZZ_ONLY=record-runs fuzzes the reader of an import's runs alone (property 19).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
export VAULTFILE_FUZZ=1 SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0
# The coverage kinds are named explicitly: with --sanitize=fuzzer alone, SwiftPM 6.3 here left the
# objects uninstrumented in some fresh builds, and libFuzzer then mutates blindly ("no interesting
# inputs were found") while still reporting success.
flags=(--sanitize=fuzzer --sanitize=address -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp
       --disable-index-store -debug-info-format none --product VaultFileFuzz --scratch-path .build-fuzz)
swift build "${flags[@]}"
bin="$(swift build "${flags[@]}" --show-bin-path)/VaultFileFuzz"
# grep reads all of objdump's output: with -q it would stop early and pipefail would see SIGPIPE.
if ! objdump -h "$bin" | grep __sancov_cntrs >/dev/null; then
  echo "fuzz: $bin has no coverage counters; the fuzzer would run blind" >&2
  exit 1
fi
corpus=.build-fuzz/corpus
mkdir -p "$corpus"
"$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=300000 \
  -artifact_prefix=.build-fuzz/ -print_final_stats=1 "$corpus" Fixtures/damaged Fixtures/v1 Fixtures/v1.1 Fixtures/v1.2 Fixtures/v1.3 Fixtures/v1.4 Fuzz/agent-seeds Fuzz/content-seeds Fuzz/seal-seeds Fixtures/import Fuzz/import-seeds Fuzz/age-seeds Fuzz/age-plugin-seeds Fuzz/plugin-client-seeds Fixtures/kdbx Fixtures/kdbx/hostile Fuzz/ssh-key-seeds Fuzz/ssh-agent-seeds Fuzz/runs-seeds
