#!/usr/bin/env bash
# vaultfile share of a 100 MiB value against age -e of the same bytes to the same recipient: the
# issue's "within 1.3x age -e" (issue 41), both timed in one run, interleaved, median of the runs.
#   bench/share.sh [--quick]        (--quick: 16 MiB, 3 runs; default 100 MiB, 5 runs)
# The vault is opened by an age identity (no password slot): no KDF runs in the measured path, as
# the issue measures it ("KDF aside"). share's time includes opening the vault (decrypting its
# payload); age -e reads the value from a file. VAULTFILE_BIN picks the binary (default: the release build).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v age >/dev/null && command -v age-keygen >/dev/null || { echo "bench/share.sh: age is not installed (apt-get install age)" >&2; exit 1; }
vf=${VAULTFILE_BIN:-$(./scripts/build-release.sh | tail -1)}
size_mib=100 runs=5
if [ "${1:-}" = --quick ]; then size_mib=16 runs=3; fi
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export VAULTFILE_STATE_DIR="$work/state" VAULTFILE_AGENT_SOCK="$work/no-agent.sock"
head -c $((size_mib << 20)) /dev/urandom > "$work/value"
age-keygen -o "$work/key.txt" 2>/dev/null
recipient=$(age-keygen -y "$work/key.txt")
"$vf" init --vault "$work/b.vault" --recipient "$recipient" --keep-history 0 >/dev/null 2>&1
"$vf" set big --value-file "$work/value" --vault "$work/b.vault" --identity "$work/key.txt" 2>/dev/null

now() { date +%s.%N; }
share_times=() age_times=()
for _ in $(seq "$runs"); do
  start=$(now)
  "$vf" share big --recipient "$recipient" --vault "$work/b.vault" --identity "$work/key.txt" > "$work/share.age" 2>/dev/null
  share_times+=("$(awk -v a="$(now)" -v b="$start" 'BEGIN { print a - b }')")
  start=$(now)
  age -e -r "$recipient" -o "$work/age.age" "$work/value"
  age_times+=("$(awk -v a="$(now)" -v b="$start" 'BEGIN { print a - b }')")
done
# Both files open to the same bytes, or the figures mean nothing.
age -d -i "$work/key.txt" "$work/share.age" | cmp -s - "$work/value" || { echo "bench/share.sh: share's file does not open to the value" >&2; exit 1; }
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
s=$(median "${share_times[@]}") a=$(median "${age_times[@]}")
printf 'share of %d MiB: vaultfile share %.3f s, age -e %.3f s, ratio %.2f (target <= 1.3), median of %d runs\n' \
  "$size_mib" "$s" "$a" "$(awk -v a="$s" -v b="$a" 'BEGIN { print a / b }')" "$runs"
