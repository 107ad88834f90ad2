#!/usr/bin/env bash
# vaultfile share of a 100 MiB value against age -e of the same bytes to the same recipient: the
# issue's "within 1.3x age -e" (issue 41), both timed in one run, interleaved, median of the runs.
# Then the other way: vaultfile receive of that 100 MiB age file into a vault against age -d of it
# (the same 1.3x asked of it), each receive into a fresh copy of an empty vault (copied untimed).
#   bench/share.sh [--quick]        (--quick: 16 MiB, 3 runs; default 100 MiB, 5 runs)
# The vault is opened by an age identity (no password slot): no KDF runs in the measured path, as
# the issue measures it ("KDF aside"). share's time includes opening the vault (decrypting its
# payload); age -e reads the value from a file. receive's time includes sealing the vault with the
# value (an encryption and a write of 100 MiB that age -d does not do); age -d writes the bytes to a file. VAULTFILE_BIN picks the binary (default: the release build).
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

"$vf" init --vault "$work/empty.vault" --recipient "$recipient" --keep-history 0 >/dev/null 2>&1
receive_times=() decrypt_times=()
for _ in $(seq "$runs"); do
  # A fresh copy, seen by no state folder yet (else the second run's copy is a stale one: exit 7).
  cp "$work/empty.vault" "$work/r.vault"
  rm -rf "$work/state-r"
  start=$(now)
  VAULTFILE_STATE_DIR="$work/state-r" "$vf" receive big "$work/age.age" --vault "$work/r.vault" --identity "$work/key.txt" 2>/dev/null
  receive_times+=("$(awk -v a="$(now)" -v b="$start" 'BEGIN { print a - b }')")
  rm -f "$work/decrypted"
  start=$(now)
  age -d -i "$work/key.txt" -o "$work/decrypted" "$work/age.age"
  decrypt_times+=("$(awk -v a="$(now)" -v b="$start" 'BEGIN { print a - b }')")
done
VAULTFILE_STATE_DIR="$work/state-r" "$vf" get big --vault "$work/r.vault" --identity "$work/key.txt" 2>/dev/null | cmp -s - "$work/value" \
  || { echo "bench/share.sh: receive did not store the value" >&2; exit 1; }
r=$(median "${receive_times[@]}") d=$(median "${decrypt_times[@]}")
printf 'receive of %d MiB: vaultfile receive %.3f s, age -d %.3f s, ratio %.2f (target <= 1.3), median of %d runs\n' \
  "$size_mib" "$r" "$d" "$(awk -v a="$r" -v b="$d" 'BEGIN { print a / b }')" "$runs"
