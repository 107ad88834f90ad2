#!/usr/bin/env bash
# The README's main job: create a vault in a temporary folder, store and read a
# secret through a pipe, list, verify and show `info`. Usage: scripts/demo.sh [path/to/vaultfile]
set -euo pipefail
vf=${1:-vaultfile}
work=$(mktemp -d "${TMPDIR:-/tmp}/vaultfile-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT
umask 077

if [ -t 1 ]; then bold=$(printf "\033[1m"); plain=$(printf "\033[0m"); else bold=; plain=; fi
step() { printf "\n%s$ %s%s\n" "$bold" "$*" "$plain"; }

# The demo's password comes from a file; interactively, vaultfile asks on the terminal.
printf 'demo password, not a real one\n' > "$work/password"
# The state folder (generations seen, for the older-copy check) lives in the temporary folder too,
# so that the demo leaves nothing behind in ~/.local/state; the agent is not asked.
export VAULTFILE_PATH="$work/demo.vault" VAULTFILE_PASSWORD_FILE="$work/password"
export VAULTFILE_STATE_DIR="$work/state" VAULTFILE_NO_AGENT=1

step "vaultfile init"
"$vf" init

step "printf 's3cret-db-password' | vaultfile set prod/db/password"
printf 's3cret-db-password' | "$vf" set prod/db/password

step "printf 'admin' | vaultfile set prod/db/password --field username"
printf 'admin' | "$vf" set prod/db/password --field username

step "head -c 64 /dev/urandom | vaultfile set prod/tls/session-ticket-key   # binary values are fine"
head -c 64 /dev/urandom | "$vf" set prod/tls/session-ticket-key

step "vaultfile get prod/db/password | wc -c   # exact bytes, nothing added"
"$vf" get prod/db/password | wc -c

step "vaultfile get prod/db/password --field username"
"$vf" get prod/db/password --field username; echo

step "vaultfile list --json"
"$vf" list --json

step "vaultfile verify"
"$vf" verify

step "vaultfile info   # no password needed"
"$vf" info

step "grep -c s3cret demo.vault   # no plaintext on disk"
grep -c s3cret "$work/demo.vault" || true

step "vaultfile get prod/db/password with a wrong password   # exit status 3"
set +e
VAULTFILE_PASSWORD_FILE= VAULTFILE_PASSWORD=wrong "$vf" get prod/db/password
status=$?
set -e
echo "exit status: $status"
[ "$status" -eq 3 ]
printf '\ndemo finished: the vault lived in %s and is removed now.\n' "$work"
