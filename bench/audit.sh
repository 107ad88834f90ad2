#!/usr/bin/env bash
# vaultfile audit --hibp against keepassxc-cli analyze --hibp on a generated sorted file.
#   bench/audit.sh [--quick]
# Full size: 100 million lines (about 4.4 GB, generated once into $VAULTFILE_BENCH_CACHE,
# default ~/.cache/vaultfile-bench) and a vault of 10,000 entries; the target is <= 2 s.
# --quick: 1 million lines and 1,000 entries. Installs keepassxc and GNU time when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
command -v keepassxc-cli >/dev/null || need+=(keepassxc)
command -v gcc >/dev/null || need+=(gcc)
[ -x /usr/bin/time ] || need+=(time)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  echo "bench: installing ${need[*]} (apt-get)" >&2
  $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
vf=${VAULTFILE_BIN:-$(./scripts/build-release.sh)}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
gcc -O2 -o "$work/hibp-gen" bench/hibp-gen.c
python3 bench/audit.py --vaultfile "$vf" --generator "$work/hibp-gen" "$@"
