#!/usr/bin/env bash
# A signature and a listing through vaultfile's ssh socket against OpenSSH's own ssh-agent holding
# the same key (issue 42: "<= 1.2x ssh-agent", ed25519 and rsa-3072): `ssh-keygen -Y sign` of a
# small file and `ssh-add -l`, each client run the same way against both agents, interleaved,
# median of the runs.
#   bench/ssh_agent.sh [--quick]     (--quick: 10 runs of each; default 40)
# The vault is opened once (`unlock --ssh`) before the clock starts: only the agents' work and the
# clients' start-up are measured, as a user meets them. A key type this build does not serve yet
# is reported as such. VAULTFILE_BIN picks the binary (default: the release build).
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in ssh-agent ssh-add ssh-keygen; do
  command -v "$tool" >/dev/null || { echo "bench/ssh_agent.sh: $tool is not installed (apt-get install openssh-client)" >&2; exit 1; }
done
vf=${VAULTFILE_BIN:-$(./scripts/build-release.sh | tail -1)}
runs=40
if [ "${1:-}" = --quick ]; then runs=10; fi
work=$(mktemp -d)
agent_pid=""
cleanup() {
  [ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null || true
  VAULTFILE_AGENT_SOCK="$work/run/agent.sock" "$vf" agent stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
export VAULTFILE_STATE_DIR="$work/state" VAULTFILE_AGENT_SOCK="$work/run/agent.sock"
printf 'bench' > "$work/pw"
"$vf" init --vault "$work/b.vault" --password-file "$work/pw" --kdf-memory 8K --kdf-iterations 1 --kdf-parallelism 1 --allow-weak-kdf >/dev/null 2>&1
printf 'a small file\n' > "$work/message"

eval "$(ssh-agent -a "$work/openssh.sock" -s)" >/dev/null
agent_pid=$SSH_AGENT_PID
for spec in ed25519 rsa:3072; do
  type=${spec%%:*} bits=${spec#*:}
  [ "$bits" = "$spec" ] && bits=""
  ssh-keygen -q -t "$type" ${bits:+-b "$bits"} -N '' -C "bench-$type" -f "$work/id_$type"
  "$vf" set "ssh/$type" --ssh-key --vault "$work/b.vault" --password-file "$work/pw" < "$work/id_$type" 2>/dev/null
  SSH_AUTH_SOCK="$work/openssh.sock" ssh-add -q "$work/id_$type" 2>/dev/null
done
vf_sock=$(eval "$("$vf" unlock --ssh --vault "$work/b.vault" --password-file "$work/pw" 2>/dev/null)"; echo "$SSH_AUTH_SOCK")

now() { date +%s.%N; }
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# time_of SOCKET COMMAND…: seconds of one run of the command with SSH_AUTH_SOCK=SOCKET (it must succeed).
time_of() {
  local sock=$1; shift
  local start; start=$(now)
  SSH_AUTH_SOCK="$sock" "$@" >/dev/null 2>&1 || { echo "bench/ssh_agent.sh: failed through $sock: $*" >&2; exit 1; }
  awk -v a="$(now)" -v b="$start" 'BEGIN { print a - b }'
}
report() {
  local what=$1 v o
  v=$(median "${vf_times[@]}") o=$(median "${ossh_times[@]}")
  printf '%s: vaultfile %.2f ms, ssh-agent %.2f ms, ratio %.2f (target <= 1.2), median of %d runs\n' \
    "$what" "$(awk -v x="$v" 'BEGIN { print x * 1000 }')" "$(awk -v x="$o" 'BEGIN { print x * 1000 }')" \
    "$(awk -v a="$v" -v b="$o" 'BEGIN { print a / b }')" "$runs"
}

for type in ed25519 rsa; do
  pub="$work/id_$type.pub"
  if ! SSH_AUTH_SOCK="$vf_sock" ssh-add -L 2>/dev/null | grep -qF "$(cut -d' ' -f2 "$pub")"; then
    echo "sign ($type): not served by this vaultfile build; skipped"
    continue
  fi
  vf_times=() ossh_times=()
  for _ in $(seq "$runs"); do
    rm -f "$work/message.sig"; vf_times+=("$(time_of "$vf_sock" ssh-keygen -Y sign -f "$pub" -n file "$work/message")")
    rm -f "$work/message.sig"; ossh_times+=("$(time_of "$work/openssh.sock" ssh-keygen -Y sign -f "$pub" -n file "$work/message")")
  done
  # The last signature verifies, or the figures mean nothing.
  echo "bench $(cat "$pub")" > "$work/allowed"
  rm -f "$work/message.sig"
  SSH_AUTH_SOCK="$vf_sock" ssh-keygen -Y sign -f "$pub" -n file "$work/message" 2>/dev/null
  ssh-keygen -Y verify -f "$work/allowed" -I bench -n file -s "$work/message.sig" < "$work/message" >/dev/null
  report "sign ($type, ssh-keygen -Y sign)"
done
vf_times=() ossh_times=()
for _ in $(seq "$runs"); do
  vf_times+=("$(time_of "$vf_sock" ssh-add -l)")
  ossh_times+=("$(time_of "$work/openssh.sock" ssh-add -l)")
done
report "list (ssh-add -l)"
