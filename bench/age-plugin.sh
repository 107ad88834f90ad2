#!/usr/bin/env bash
# age -d of a small file through age-plugin-vaultfile (the key in a vault the agent holds) against
# age -d -i with the key in a file: the issue's "<= 3x" (issue 43), both timed in one run,
# interleaved, median of the runs. The plugin's time includes its start, the agent's status and
# key requests (no confirm command), opening the vault (a few entries) and the X25519 unwrap.
#   bench/age-plugin.sh [--quick]      (--quick: 5 runs of 5 decryptions; default 15 runs)
# VAULTFILE_BIN picks the binary (default: the release build).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v age >/dev/null && command -v age-keygen >/dev/null || { echo "bench/age-plugin.sh: age is not installed (apt-get install age)" >&2; exit 1; }
vf=${VAULTFILE_BIN:-$(./scripts/build-release.sh | tail -1)}
runs=15 batch=5
if [ "${1:-}" = --quick ]; then runs=5; fi
work=$(mktemp -d)
export VAULTFILE_STATE_DIR="$work/state" VAULTFILE_AGENT_SOCK="$work/agent.sock" XDG_CONFIG_HOME="$work/config"
trap '"$vf" agent stop >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
mkdir -p "$work/bin" && ln -s "$(realpath "$vf")" "$work/bin/age-plugin-vaultfile"
age-keygen -o "$work/key.txt" 2>/dev/null
recipient=$(age-keygen -y "$work/key.txt")
age-keygen -o "$work/vault-key.txt" 2>/dev/null
"$vf" init --vault "$work/v.vault" --recipient "$(age-keygen -y "$work/vault-key.txt")" >/dev/null 2>&1
"$vf" set age/key --value-file "$work/key.txt" --vault "$work/v.vault" --identity "$work/vault-key.txt" 2>/dev/null
for i in 1 2 3 4 5 6 7 8; do printf 'value %s' "$i" | "$vf" set "other/$i" --vault "$work/v.vault" --identity "$work/vault-key.txt" 2>/dev/null; done
"$vf" age-identity age/key --lend --vault "$work/v.vault" --identity "$work/vault-key.txt" > "$work/plugin-id.txt" 2>/dev/null
"$vf" unlock --vault "$work/v.vault" --identity "$work/vault-key.txt" --timeout 10m >/dev/null 2>&1
printf 'a small secret file\n' | age -r "$recipient" > "$work/small.age"
# Both ways open the file to the same bytes, or the figures mean nothing.
[ "$(PATH="$work/bin:$PATH" age -d -i "$work/plugin-id.txt" "$work/small.age")" = "a small secret file" ] \
  || { echo "bench/age-plugin.sh: the plugin did not decrypt the file" >&2; exit 1; }

now() { date +%s.%N; }
plugin_times=() age_times=()
for _ in $(seq "$runs"); do
  start=$(now)
  for _ in $(seq "$batch"); do PATH="$work/bin:$PATH" age -d -i "$work/plugin-id.txt" "$work/small.age" >/dev/null; done
  plugin_times+=("$(awk -v a="$(now)" -v b="$start" -v n="$batch" 'BEGIN { print (a - b) / n }')")
  start=$(now)
  for _ in $(seq "$batch"); do age -d -i "$work/key.txt" "$work/small.age" >/dev/null; done
  age_times+=("$(awk -v a="$(now)" -v b="$start" -v n="$batch" 'BEGIN { print (a - b) / n }')")
done
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
p=$(median "${plugin_times[@]}") a=$(median "${age_times[@]}")
printf 'age -d of a small file: through age-plugin-vaultfile %.1f ms, age -d -i key file %.1f ms, ratio %.2f (target <= 3), median of %d runs of %d\n' \
  "$(awk -v x="$p" 'BEGIN { print x * 1000 }')" "$(awk -v x="$a" 'BEGIN { print x * 1000 }')" "$(awk -v a="$p" -v b="$a" 'BEGIN { print a / b }')" "$runs" "$batch"
