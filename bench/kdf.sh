#!/usr/bin/env bash
# KDF unlock cost of vaultfile against the reference tools, as ratios of medians
# measured side by side in one run (whole processes, interleaved).
#   bench/kdf.sh [--quick]
# Compares: `vaultfile verify` of an empty vault against the Debian `argon2` CLI
# (Argon2id 64 MiB, t=3, p=4 and p=1) and `openssl kdf ... PBKDF2` (600,000
# iterations of HMAC-SHA256). The same parameters on both sides; only overhead
# (process start, reading the file, the library build) should differ.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=15
[ "${1:-}" = "--quick" ] && runs=5

need=()
command -v argon2 >/dev/null || need+=(argon2)
command -v openssl >/dev/null || need+=(openssl)
command -v python3 >/dev/null || need+=(python3)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

swift build -c release >/dev/null
vf="$(swift build -c release --show-bin-path)/vaultfile"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
printf 'benchmark password' > "$work/pw"
"$vf" init --vault "$work/p4.vault" --password-file "$work/pw" >/dev/null 2>&1
"$vf" init --vault "$work/p1.vault" --password-file "$work/pw" --kdf-parallelism 1 >/dev/null 2>&1
"$vf" init --vault "$work/pbkdf2.vault" --password-file "$work/pw" --kdf pbkdf2 >/dev/null 2>&1

python3 - "$runs" "$vf" "$work" <<'PY'
import statistics, subprocess, sys, time, platform, os
runs, vf, work = int(sys.argv[1]), sys.argv[2], sys.argv[3]
pw = open(f"{work}/pw", "rb").read()
def timed(cmd, stdin=None):
    start = time.perf_counter()
    subprocess.run(cmd, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start
unlock = lambda v: [vf, "verify", "--vault", f"{work}/{v}", "--password-file", f"{work}/pw"]
pairs = [
    ("Argon2id 64 MiB t=3 p=4", unlock("p4.vault"), None,
     ["argon2", "saltsaltsaltsalt", "-id", "-t", "3", "-k", "65536", "-p", "4", "-l", "32", "-r"], pw, "argon2 CLI"),
    ("Argon2id 64 MiB t=3 p=1", unlock("p1.vault"), None,
     ["argon2", "saltsaltsaltsalt", "-id", "-t", "3", "-k", "65536", "-p", "1", "-l", "32", "-r"], pw, "argon2 CLI"),
    ("PBKDF2-SHA256 600k", unlock("pbkdf2.vault"), None,
     ["openssl", "kdf", "-keylen", "32", "-kdfopt", "digest:SHA256", "-kdfopt", "pass:benchmark password",
      "-kdfopt", "salt:saltsaltsaltsalt", "-kdfopt", "iter:600000", "PBKDF2"], None, "openssl kdf"),
]
print(f"# KDF unlock cost, {runs} runs each, interleaved; {platform.machine()}, {os.cpu_count()} cores")
print(f"{'work':26} {'vaultfile':>10} {'reference':>10} {'ratio':>7}  reference tool")
for name, ours, ours_in, ref, ref_in, label in pairs:
    timed(ours, ours_in); timed(ref, ref_in)  # warm-up
    a, b = [], []
    for _ in range(runs):
        a.append(timed(ours, ours_in)); b.append(timed(ref, ref_in))
    ma, mb = statistics.median(a), statistics.median(b)
    print(f"{name:26} {ma*1000:8.1f}ms {mb*1000:8.1f}ms {ma/mb:6.2f}x  {label}")
PY
