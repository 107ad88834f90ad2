#!/usr/bin/env bash
# vaultfile against its peers, as medians and ratios measured side by side in one run.
#   bench/run.sh [--quick] [--markdown FILE]
# Installs what it compares against when missing (argon2, keepassxc, ansible-core,
# age, hyperfine, GNU time; pykeepass to write KeePassXC databases with chosen
# Argon2id settings), builds vaultfile in release mode and the C floor
# (bench/floor.c), then runs bench/run.py. About 10 minutes; --quick about one
# (1,000 and 10,000 entries, fewer runs, no 100,000-entry KeePassXC database).
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
for tool in argon2:argon2 keepassxc-cli:keepassxc ansible-vault:ansible-core age:age hyperfine:hyperfine \
            openssl:openssl gcc:gcc pkg-config:pkg-config; do
  command -v "${tool%%:*}" >/dev/null || need+=("${tool#*:}")
done
[ -x /usr/bin/time ] || need+=(time)
pkg-config --exists libsodium libargon2 2>/dev/null || need+=(libsodium-dev libargon2-dev)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  echo "bench: installing ${need[*]} (apt-get)" >&2
  $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
python3 -c 'import pykeepass' 2>/dev/null || python3 -m pip install --quiet pykeepass

# The build of `make release` (scripts/build-release.sh).
vf=$(./scripts/build-release.sh)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# shellcheck disable=SC2046
gcc -O2 -o "$work/floor" bench/floor.c $(pkg-config --cflags --libs libsodium libargon2)
python3 bench/run.py --vaultfile "$vf" --floor "$work/floor" --work "$work" "$@"
