#!/bin/sh
# What `make test` runs: builds the tests, runs the main suite, then the tests that drive
# outside tools (the ExternalTools suite: git, a terminal through util-linux script, groff),
# and ends with the time of each part and the totals, so that every change sees what it costs:
#
#   make test: build 3.1 s, suite 12.3 s, outside tools 4.1 s
#   174 passed, 0 failed
#
# Both parts always run; the script fails when the build or either part fails.
# Usage: Tests/make-test.sh [swift [release-flags]]   (the Makefile passes its RELEASE_FLAGS)
set -u
SWIFT=${1:-swift}
RELEASE_FLAGS=${2:--c release --static-swift-stdlib}
logs=$(mktemp -d "${TMPDIR:-/tmp}/vaultfile-make-test.XXXXXX") || exit 1
trap 'rm -rf "$logs"' EXIT INT TERM

now() { date +%s.%N; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# part NAME ARGUMENTS…: `swift test --skip-build ARGUMENTS…`, shown as it runs and kept in
# $logs/NAME.log, its exit status in $logs/NAME.status and its seconds in $logs/NAME.time.
part() {
    name=$1
    shift
    start=$(now)
    { "$SWIFT" test --skip-build "$@" 2>&1; echo $? >"$logs/$name.status"; } | tee "$logs/$name.log"
    seconds "$start" "$(now)" >"$logs/$name.time"
}

# counts NAME: "TESTS FAILED" of a part, from Swift Testing's closing line and its failed
# tests, plus XCTest's; a part that failed without any summary (a crash) counts one failure.
counts() {
    awk -v status="$(cat "$logs/$1.status")" '
        /Test run with [0-9]+ tests? / { for (i = 1; i <= NF; i++) if ($i == "with") { tests = $(i + 1); break }; summary = 1 }
        / Test / && /failed after/ && !/Test run with/ { failed++ }
        /Executed [0-9]+ tests?, with/ { for (i = 1; i <= NF; i++) if ($i == "Executed") { xctests = $(i + 1); break } }
        /^Test Case .* failed/ { xcfailed++ }
        END {
            failed += xcfailed
            if (status != 0 && failed == 0) failed = 1
            printf "%d %d\n", tests + xctests, failed
        }' "$logs/$1.log"
}

# The tests build in debug; the binary that the CLI tests run is the release build (the one
# `make demo` and `make install` use): a debug swift-argument-parser validates every option
# group on each run, which made each of the suite's ~1,500 runs of the binary 10x slower.
# VAULTFILE_TEST_BINARY already set (e.g. to a sanitized build) is kept.
start=$(now)
"$SWIFT" build --build-tests || exit 1
if [ -z "${VAULTFILE_TEST_BINARY:-}" ]; then
    # shellcheck disable=SC2086 # RELEASE_FLAGS is a list of flags
    "$SWIFT" build $RELEASE_FLAGS --product vaultfile || exit 1
    # shellcheck disable=SC2086
    VAULTFILE_TEST_BINARY="$("$SWIFT" build $RELEASE_FLAGS --show-bin-path)/vaultfile"
fi
export VAULTFILE_TEST_BINARY
build=$(seconds "$start" "$(now)")

part suite --skip ExternalTools
part tools --filter ExternalTools

set -- $(counts suite) $(counts tools)
total=$(($1 + $3))
failed=$(($2 + $4))
echo
# A part that failed repeats its closing line here, so that the last runner summary is not another part's pass.
for name in suite tools; do
    if [ "$(cat "$logs/$name.status")" != 0 ]; then
        echo "make test: the $name failed: $(grep -E 'Test run with [0-9]+ tests?' "$logs/$name.log" | tail -n 1)"
    fi
done
echo "make test: build $build s, suite $(cat "$logs/suite.time") s, outside tools $(cat "$logs/tools.time") s"
echo "$((total - failed)) passed, $failed failed"
[ "$(cat "$logs/suite.status")" = 0 ] && [ "$(cat "$logs/tools.status")" = 0 ]
