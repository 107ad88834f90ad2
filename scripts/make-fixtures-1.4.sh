#!/bin/sh
# Writes the golden vaults of format 1.4 (Fixtures/v1.4/: ssh-rsa slots, long slot keys) and their
# manifest, once, with three RSA keys made here by the real ssh-keygen (2,048, 4,096 and 8,192 bits (the last for the header-limit test), no
# passphrase). Released fixtures never change: this refuses to run where Fixtures/v1.4 exists.
# The tests (RSAFixtureTests) then open each with each of its secrets and check the manifest.
# Usage: scripts/make-fixtures-1.4.sh
set -eu
cd "$(dirname "$0")/.."
if [ -e Fixtures/v1.4/manifest.json ]; then
    echo "Fixtures/v1.4 exists: released fixtures never change" >&2
    exit 1
fi
command -v ssh-keygen >/dev/null || { echo "ssh-keygen is needed (Debian: openssh-client)" >&2; exit 1; }
mkdir -p Fixtures/v1.4
for bits in 2048 4096 8192; do
    [ -e "Fixtures/v1.4/ssh-rsa-$bits.key" ] || ssh-keygen -q -t rsa -b "$bits" -N '' -C "rsa$bits@fixture" -f "Fixtures/v1.4/ssh-rsa-$bits.key"
done
swift build --build-tests
VAULTFILE_WRITE_FIXTURES=1 swift test --skip-build --filter 'RSAFixtureTests/test_writeFixtures_v1_4'
ls -l Fixtures/v1.4
