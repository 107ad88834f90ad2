#!/usr/bin/env bash
# Issue 44's speed row for pass: importing an N-entry pass store against the floor, decrypting
# its files with gpg in one shell loop, measured side by side in one run (target: ≤ 1.2×).
#   bench/pass_import.sh [N] [VAULTFILE]   (default 10000 entries; VAULTFILE defaults to the
#                                           debug build .build/debug/vaultfile)
# The store is made under a throw-away %no-protection gpg key in a temporary GNUPGHOME (files
# encrypted by one `gpg --encrypt-files` run), so gpg-agent holds the key unlocked as a user's does.
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-10000}
vf=$(realpath "${2:-.build/debug/vaultfile}")
work=$(mktemp -d)
export GNUPGHOME="$work/gnupg"
trap 'gpgconf --kill gpg-agent >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
mkdir -m 700 "$GNUPGHOME"
gpg --batch --quiet --gen-key <<'EOF'
%no-protection
Key-Type: eddsa
Key-Curve: ed25519
Subkey-Type: ecdh
Subkey-Curve: cv25519
Name-Real: Bench
Name-Email: bench@example.invalid
Expire-Date: 0
%commit
EOF
store="$work/store"
mkdir -p "$store"
echo "bench@example.invalid" > "$store/.gpg-id"
python3 bench/make_pass_store.py "$store" "$count"
find "$store" -type f ! -name .gpg-id -print0 | xargs -0 gpg --batch --quiet --yes -r bench@example.invalid --encrypt-files
find "$store" -type f ! -name .gpg-id ! -name '*.gpg' -delete

floor() {
  find "$store" -name '*.gpg' -print0 | while IFS= read -r -d '' f; do gpg --decrypt --batch --quiet "$f" >/dev/null; done
}
run_import() {
  rm -f "$work/t.vault"
  "$vf" init --vault "$work/t.vault" --password-file "$work/pw" --kdf-memory 8K --kdf-iterations 1 --kdf-parallelism 1 --allow-weak-kdf 2>/dev/null
  "$vf" import --format pass "$store" --vault "$work/t.vault" --password-file "$work/pw" 2>/dev/null
}
echo bench-password > "$work/pw"
floor  # warm gpg-agent and the page cache once
now() { date +%s.%N; }
start=$(now); floor; mid=$(now); run_import; end=$(now)
python3 - "$count" "$start" "$mid" "$end" <<'EOF'
import sys
count, start, mid, end = int(sys.argv[1]), *map(float, sys.argv[2:])
floor, imported = mid - start, end - mid
print(f"pass store of {count} entries: gpg loop {floor:.2f} s, vaultfile import {imported:.2f} s, "
      f"ratio {imported / floor:.2f} (target <= 1.20)")
EOF
