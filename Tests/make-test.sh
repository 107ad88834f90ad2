#!/bin/sh
# What `make test` runs: builds the tests, runs the main suite (in VAULTFILE_TEST_SHARDS test
# processes at once, 3 unless set), then the tests that drive outside tools (the ExternalTools
# suite: git, a terminal through util-linux script, groff), and ends with the time of each part
# and the totals, so that every change sees what it costs:
#
#   make test: build 2.0 s, suite 16.7 s, outside tools 6.5 s
#   694 passed, 0 failed
#
# Both parts always run; the script fails when the build or either part fails.
# Usage: Tests/make-test.sh [swift]   (SHARED_LIBS=1: the release binary as scripts/build-release.sh
# builds it with shared libraries)
set -u
SWIFT=${1:-swift}
logs=$(mktemp -d "${TMPDIR:-/tmp}/vaultfile-make-test.XXXXXX") || exit 1
trap 'rm -rf "$logs"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A test process that runs longer than VAULTFILE_TEST_TIMEOUT seconds (default 1,800; 0: no bound)
# is stopped with its process group, and the tests it had started and not finished are named in
# its log: a hang then fails in minutes, with its name, instead of using up CI's time unseen.
LIMIT=${VAULTFILE_TEST_TIMEOUT:-1800}
bounded() {
    if [ "$LIMIT" = 0 ]; then "$@"; else timeout -k 20 "$LIMIT" "$@"; fi
}
# unfinished LOG STATUS: when STATUS says `timeout` stopped the process, the line saying so and the
# tests of LOG that started and never passed or failed (Swift Testing's "started" and "after" lines).
unfinished() {
    case "$2" in 124|137) ;; *) return 0 ;; esac
    echo "make test: a test process ran over $LIMIT s (VAULTFILE_TEST_TIMEOUT) and was stopped; started and not finished:"
    awk '
        / Test .* started\.$/ { name = $0; sub(/^.* Test /, "", name); sub(/ started\.$/, "", name); open[name]++ }
        / Test .* (passed|failed) after / { name = $0; sub(/^.* Test /, "", name); sub(/ (passed|failed) after .*$/, "", name); open[name]-- }
        END { for (name in open) if (open[name] > 0) print "  " name }' "$1"
}

now() { date +%s.%N; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# part NAME ARGUMENTS…: `swift test --skip-build ARGUMENTS…`, shown as it runs and kept in
# $logs/NAME.log, its exit status in $logs/NAME.status and its seconds in $logs/NAME.time.
part() {
    name=$1
    shift
    start=$(now)
    { bounded "$SWIFT" test --skip-build "$@" 2>&1; echo $? >"$logs/$name.status"; } | tee "$logs/$name.log"
    unfinished "$logs/$name.log" "$(cat "$logs/$name.status")" | tee -a "$logs/$name.log"
    seconds "$start" "$(now)" >"$logs/$name.time"
}

# counts NAME: "TESTS FAILED" of a part, from Swift Testing's closing line and its failed
# tests, plus XCTest's; a part that failed without any summary (a crash) counts one failure.
counts() {
    awk -v status="$(cat "$logs/$1.status")" '
        /Test run with [0-9]+ tests? / { for (i = 1; i <= NF; i++) if ($i == "with") { tests += $(i + 1); break }; summary = 1 }
        / Test / && /failed after/ && !/Test run with/ { failed++ }
        /Executed [0-9]+ tests?, with/ { for (i = 1; i <= NF; i++) if ($i == "Executed") { xctests += $(i + 1); break } }
        /^Test Case .* failed/ { xcfailed++ }
        END {
            failed += xcfailed
            if (status != 0 && failed == 0) failed = 1
            printf "%d %d\n", tests + xctests, failed
        }' "$logs/$1.log"
}

# The tests build in debug; the binary that the CLI tests run is the release build (the one
# `make demo`, `make install` and `make portable` use, scripts/build-release.sh): a debug swift-argument-parser validates every option
# group on each run, which made each of the suite's ~1,500 runs of the binary 10x slower.
# VAULTFILE_TEST_BINARY already set (e.g. to a sanitized build) is kept.
#
# VAULTFILE_TEST_SANITIZER=address|thread (`make check-sanitizers`): the tests and the binary they
# run are the debug build under that sanitizer, in .build-asan or .build-tsan; the shards below
# serve it too (run one after another, the ASan suite took 12 minutes on two cores).
# VAULTFILE_TEST_SUITES keeps only the main suite's suites whose names match that extended regex,
# VAULTFILE_TEST_TOOLS_FILTER narrows the outside tools part (a --filter regex, default
# ExternalTools), and VAULTFILE_TEST_SKIP is passed to every test process as --skip.
#
# No DWARF: nothing here reads it (a test failure names its file and line from the source, a
# sanitizer report names functions from the symbol table). The index store stays: SwiftPM on
# Linux finds the XCTest tests through it ("index store path does not exist" without it).
SANITIZER=${VAULTFILE_TEST_SANITIZER:-}
set -- -debug-info-format none
case "$SANITIZER" in
    "") ;;
    address) set -- "$@" --sanitize=address --scratch-path .build-asan ;;
    thread) set -- "$@" --sanitize=thread --scratch-path .build-tsan ;;
    *) echo "make-test: VAULTFILE_TEST_SANITIZER must be address or thread, not '$SANITIZER'" >&2; exit 2 ;;
esac
SKIP=${VAULTFILE_TEST_SKIP:-}
start=$(now)
"$SWIFT" build --build-tests "$@" || exit 1
if [ -n "$SANITIZER" ]; then
    VAULTFILE_TEST_BINARY="$("$SWIFT" build "$@" --show-bin-path)/vaultfile"
elif [ -z "${VAULTFILE_TEST_BINARY:-}" ]; then
    VAULTFILE_TEST_BINARY=$(SWIFT="$SWIFT" "$(dirname "$0")/../scripts/build-release.sh") || exit 1
fi
export VAULTFILE_TEST_BINARY
# The independent XEdDSA of SealVectorTests, where `make test-deps` installed it.
if [ -z "${VAULTFILE_XEDDSA_PYTHON:-}" ] && [ -x .build/xeddsa-venv/bin/python ]; then
    VAULTFILE_XEDDSA_PYTHON=$PWD/.build/xeddsa-venv/bin/python
    export VAULTFILE_XEDDSA_PYTHON
fi
# The independent HPKE of PQInteropTests (PyPI cryptography), where `make test-deps` installed it.
if [ -z "${VAULTFILE_PQ_PYTHON:-}" ] && [ -x .build/pq-venv/bin/python ]; then
    VAULTFILE_PQ_PYTHON=$PWD/.build/pq-venv/bin/python
    export VAULTFILE_PQ_PYTHON
fi
build=$(seconds "$start" "$(now)")

# The main suite runs as SHARDS test processes at once, each with a share of the suites. One
# process runs as many tests at a time as the machine has cores, and a test that waits (an
# agent's idle timeout, a clipboard clear, a signal) holds one of them meanwhile: on two cores
# the suite took half again as long as its CPU time. The suites that wait longest are dealt out
# first, by the seconds each took alone (measured on the 2-core VM; a suite not named counts
# as 0.4 s), each to the shard with the least so far; a suite's tests stay in one process.
SHARDS=${VAULTFILE_TEST_SHARDS:-3}
SLOW_SUITES="vaultfileTests.AgentCLITests=7.0 vaultfileTests.AgentSecurityCLITests=3.2 VaultFileTests.VaultCodecTests=2.8
vaultfileTests.ClipboardCLITests=2.6 vaultfileTests.InstallAndAliasesCLITests=2.0 vaultfileTests.HelpManPageCLITests=1.5
VaultFileTests.VaultModelTests=1.5 LinearRegexTests.LinearRegexTests=1.1 vaultfileTests.KeyslotCLITests=0.9
vaultfileTests.HardeningCLITests=0.9 VaultFileTests.EntriesOnlyReadTests=0.8"
bundle="$("$SWIFT" build "$@" --show-bin-path)/vaultfilePackageTests.xctest"

# shard_filters: one line per shard, the --filter expression of its suites.
shard_filters() {
    "$bundle" --testing-library swift-testing --list-tests 2>/dev/null | sed 's|/.*||' | sort -u | grep -vx 'vaultfileTests.ExternalTools' |
        grep -E "${VAULTFILE_TEST_SUITES:-.}" |
        awk -v shards="$SHARDS" -v slow="$SLOW_SUITES" '
            BEGIN { n = split(slow, pairs, /[ \n]+/); for (i = 1; i <= n; i++) { split(pairs[i], kv, "="); cost[kv[1]] = kv[2]; order[i] = kv[1] }; count = n }
            { if (!($0 in cost)) { cost[$0] = 0.4; order[++count] = $0 } ; present[$0] = 1 }
            END {
                for (i = 1; i <= count; i++) {
                    suite = order[i]
                    if (!(suite in present)) continue
                    best = 0
                    for (k = 1; k < shards; k++) if (load[k] < load[best]) best = k
                    load[best] += cost[suite]
                    expression[best] = expression[best] (expression[best] == "" ? "" : "|") "^" suite "/"
                }
                for (k = 0; k < shards; k++) if (expression[k] != "") print expression[k]
            }'
}

# The suite part: every shard at once, each into its own log; then the logs one after another
# (never interleaved), as one part for the counts.
start=$(now)
index=0
shard_filters >"$logs/shards"
while IFS= read -r expression; do
    { bounded "$bundle" --testing-library swift-testing --filter "$expression" --skip "ExternalTools${SKIP:+|$SKIP}" >"$logs/shard$index.log" 2>&1
      status=$?; echo $status >"$logs/shard$index.status"; unfinished "$logs/shard$index.log" $status >>"$logs/shard$index.log"
      seconds "$start" "$(now)" >"$logs/shard$index.time"; } &
    index=$((index + 1))
done <"$logs/shards"
wait
: >"$logs/suite.log"
echo 0 >"$logs/suite.status"
index=0
while [ -e "$logs/shard$index.status" ]; do
    echo "--- test process $((index + 1)) of $(wc -l <"$logs/shards")"
    cat "$logs/shard$index.log"
    cat "$logs/shard$index.log" >>"$logs/suite.log"
    [ "$(cat "$logs/shard$index.status")" = 0 ] || cat "$logs/shard$index.status" >"$logs/suite.status"
    index=$((index + 1))
done
seconds "$start" "$(now)" >"$logs/suite.time"
# When each process ended: how well the suites are dealt out (SLOW_SUITES above).
shard_times=$(for time in "$logs"/shard*.time; do printf '%s, ' "$(cat "$time")"; done)
shard_times=${shard_times%, }

# The outside tools part: VAULTFILE_TEST_TOOLS_FILTER narrows it (a --filter regex).
part tools "$@" --filter "${VAULTFILE_TEST_TOOLS_FILTER:-ExternalTools}" ${SKIP:+--skip "$SKIP"}

set -- $(counts suite) $(counts tools)
total=$(($1 + $3))
failed=$(($2 + $4))
echo
# A part that failed repeats its closing line here, so that the last runner summary is not another part's pass.
for name in suite tools; do
    if [ "$(cat "$logs/$name.status")" != 0 ]; then
        summary=$(grep -E 'Test run with [0-9]+ tests?' "$logs/$name.log" | tail -n 1)
        echo "make test: the $name failed: ${summary:-a test process ended without its summary (a crash: see its log above)}"
    fi
done
echo "make test: build $build s, suite $(cat "$logs/suite.time") s (its processes ended after $shard_times s), outside tools $(cat "$logs/tools.time") s"
passed=$((total - failed)); [ "$passed" -ge 0 ] || passed=0
echo "$passed passed, $failed failed"
[ "$(cat "$logs/suite.status")" = 0 ] && [ "$(cat "$logs/tools.status")" = 0 ]
