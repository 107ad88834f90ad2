#!/bin/sh
# Writes the golden vaults of format 1.3 (Fixtures/v1.3/: signed seals) and their manifest, once.
# Released fixtures never change: the writer refuses to overwrite any file, so this runs only in
# a tree without Fixtures/v1.3. The tests (SignedFixtureTests) then open each and check the manifest.
# Usage: scripts/make-fixtures-1.3.sh
set -eu
cd "$(dirname "$0")/.."
if [ -e Fixtures/v1.3/manifest.json ]; then
    echo "Fixtures/v1.3 exists: released fixtures never change" >&2
    exit 1
fi
swift build --build-tests
VAULTFILE_WRITE_FIXTURES=1 swift test --skip-build --filter 'SignedFixtureTests/test_writeFixtures_v1_3'
ls -l Fixtures/v1.3
