#!/usr/bin/env bash
# vaultfile get through a post-quantum identity (mlkem768x25519 slot) against get through an
# X25519 identity, on the same vault (issue 41: "≤ 1.5x, KDF aside"). The vault has one slot of
# each kind and no password, so no KDF runs; both reads are timed in one run, interleaved, median
# of the runs, as a ratio.
#   bench/pq-get.sh [--quick]       (--quick: 10 runs; default 40)
# VAULTFILE_BIN picks the binary (default: the release build).
set -euo pipefail
cd "$(dirname "$0")/.."
vf=${VAULTFILE_BIN:-$(./scripts/build-release.sh | tail -1)}
runs=40
if [ "${1:-}" = --quick ]; then runs=10; fi
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export VAULTFILE_STATE_DIR="$work/state" VAULTFILE_AGENT_SOCK="$work/no-agent.sock" XDG_CONFIG_HOME="$work/config"
classical=$("$vf" keygen -o "$work/x25519.txt")
pq=$("$vf" keygen --pq -o "$work/pq.txt")
"$vf" init --vault "$work/v.vault" --recipient "$pq" >/dev/null 2>&1
"$vf" slot add recipient "$classical" --allow-classical --vault "$work/v.vault" --identity "$work/pq.txt" >/dev/null 2>&1
printf 'a secret value' | "$vf" set db/password --vault "$work/v.vault" --identity "$work/pq.txt" 2>/dev/null
# Both identities must read the same value, or the figures mean nothing.
[ "$("$vf" get db/password --vault "$work/v.vault" --identity "$work/pq.txt" --no-agent)" = "a secret value" ] || { echo "bench/pq-get.sh: the post-quantum identity does not read the value" >&2; exit 1; }
[ "$("$vf" get db/password --vault "$work/v.vault" --identity "$work/x25519.txt" --no-agent)" = "a secret value" ] || { echo "bench/pq-get.sh: the X25519 identity does not read the value" >&2; exit 1; }

now() { date +%s.%N; }
pq_times=() x_times=()
for _ in $(seq "$runs"); do
  start=$(now)
  "$vf" get db/password --vault "$work/v.vault" --identity "$work/pq.txt" --no-agent >/dev/null
  pq_times+=("$(awk -v a="$(now)" -v b="$start" 'BEGIN { print a - b }')")
  start=$(now)
  "$vf" get db/password --vault "$work/v.vault" --identity "$work/x25519.txt" --no-agent >/dev/null
  x_times+=("$(awk -v a="$(now)" -v b="$start" 'BEGIN { print a - b }')")
done
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
p=$(median "${pq_times[@]}") x=$(median "${x_times[@]}")
printf 'get through a post-quantum identity %.4f s, through an X25519 identity %.4f s, ratio %.2f (target <= 1.5), median of %d runs\n' \
  "$p" "$x" "$(awk -v a="$p" -v b="$x" 'BEGIN { print a / b }')" "$runs"
