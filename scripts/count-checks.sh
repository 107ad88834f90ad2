#!/bin/sh
# Counts the checks the tests execute (each #expect and #require that runs, not as written), so that
# a change to the suite can show it lost none: runs the built test bundle with the given arguments
# and prints "TESTS tests, CHECKS checks executed".
#
#   scripts/count-checks.sh [bundle arguments…]      e.g. --filter '^vaultfileTests.HelpManPageCLITests/'
#
# Swift Testing reports no passed expectation (neither in its output nor in its event stream), so
# the count comes from a small preloaded library: for every exported __check* function of
# libTesting.so (what the two macros expand to), a stub that adds one to a counter and jumps on to
# the real function; the total is written when the process ends. The library unsets LD_PRELOAD
# first, so the binaries the tests spawn do not inherit it. A whole run's total can differ by a few
# between runs of the same code (loops that depend on timing or on unseeded random values): compare
# the suites you changed, each alone, before and after. Needs cc, nm and python3; build the tests first.
set -eu
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
bundle="$("$SWIFT" build --show-bin-path)/vaultfilePackageTests.xctest"
[ -x "$bundle" ] || { echo "count-checks: $bundle is missing: run 'swift build --build-tests' first" >&2; exit 1; }
testing=$(ldd "$bundle" | awk '$1 == "libTesting.so" { print $3 }')
[ -n "$testing" ] || { echo "count-checks: the bundle does not load libTesting.so" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/count-checks.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

nm -D --defined-only "$testing" | awk '$2 == "T" && $3 ~ /__check/ { print $3 }' >"$work/symbols"
python3 - "$work/symbols" "$work/count.c" <<'EOF'
import sys
symbols = [line.strip() for line in open(sys.argv[1]) if line.strip()]
out = ['#define _GNU_SOURCE', '#include <dlfcn.h>', '#include <fcntl.h>', '#include <stdio.h>', '#include <stdlib.h>',
       '#include <unistd.h>',
       '__attribute__((visibility("hidden"), used)) unsigned long count_checks;']
for i, name in enumerate(symbols):
    out.append(f'__attribute__((visibility("hidden"), used)) void *count_real_{i};')
    out.append(f'__asm__(".globl {name}\\n.type {name},@function\\n{name}:\\n lock incq count_checks(%rip)\\n jmp *count_real_{i}(%rip)\\n");')
out.append('__attribute__((constructor)) static void count_start(void) {')
out += [f'    count_real_{i} = dlsym(RTLD_NEXT, "{name}");' for i, name in enumerate(symbols)]
out.append('    unsetenv("LD_PRELOAD");')
out.append('}')
out.append('''__attribute__((destructor)) static void count_end(void) {
    const char *path = getenv("COUNT_CHECKS_FILE");
    if (count_checks == 0 || path == NULL) return;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0600);
    if (fd < 0) return;
    char line[32];
    int length = snprintf(line, sizeof line, "%lu\\n", count_checks);
    if (write(fd, line, (size_t)length) < 0) { /* nothing to do */ }
    close(fd);
}''')
open(sys.argv[2], 'w').write('\n'.join(out) + '\n')
EOF
cc -shared -fPIC -O2 -o "$work/libcount.so" "$work/count.c" -ldl

status=0
COUNT_CHECKS_FILE="$work/count" LD_PRELOAD="$work/libcount.so" "$bundle" --testing-library swift-testing "$@" >"$work/log" 2>&1 || status=$?
tests=$(grep -Eo 'Test run with [0-9]+ tests?' "$work/log" | tail -n 1 | awk '{ print $4 }')
[ "$status" = 0 ] || { tail -n 20 "$work/log"; echo "count-checks: the tests failed (status $status)" >&2; }
echo "${tests:-0} tests, $(cat "$work/count" 2>/dev/null || echo 0) checks executed"
exit "$status"
