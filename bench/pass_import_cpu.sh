#!/usr/bin/env bash
# vaultfile's own CPU time (user + sys of the vaultfile process alone, not its children) while
# `import --format pass` runs N fake gpg processes, for two binaries side by side in one run:
# a change to how the import waits for its tools (ParallelDecryption) must not cost more.
#   bench/pass_import_cpu.sh [N] [VAULTFILE] [REFERENCE]   (default 10000 files; VAULTFILE the
#                                                         debug build; REFERENCE another binary)
# Two fake gpg: `exec cat`, and one that closes its output and lingers 50 ms before it exits
# (gpg waiting on its agent, a wrapper), which a run that looks for exits on a timer pays for.
# The CPU is read from /proc/PID/stat once vaultfile has exited and before it is reaped.
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-10000}
vf=$(realpath "${2:-.build/debug/vaultfile}")
reference=$(realpath "${3:-$vf}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/store"
echo K > "$work/store/.gpg-id"
python3 bench/make_pass_store.py "$work/store" "$count" .gpg
echo bench-password > "$work/pw"
measure() {  # measure LABEL BINARY
  python3 - "$1" "$2" "$work" <<'PY'
import os, subprocess, sys
label, vf, work = sys.argv[1:]
env = dict(os.environ, PATH=work + "/bin:/usr/bin:/bin", HOME=work, VAULTFILE_STATE_DIR=work + "/state", VAULTFILE_NO_AGENT="1",
           VAULTFILE_QUIET_WEAK_PASSWORD="1", XDG_CONFIG_HOME=work + "/config")
vault = work + "/t.vault"
if os.path.exists(vault): os.remove(vault)
subprocess.run([vf, "init", "--vault", vault, "--password-file", work + "/pw", "--kdf-memory", "8K", "--kdf-iterations", "1",
                "--kdf-parallelism", "1", "--allow-weak-kdf"], env=env, check=True, stderr=subprocess.DEVNULL)
p = subprocess.Popen([vf, "import", "--format", "pass", work + "/store", "--vault", vault, "--password-file", work + "/pw"],
                     env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)
fields = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
tick = os.sysconf("SC_CLK_TCK")
cpu = (int(fields[11]) + int(fields[12])) / tick
assert p.wait() == 0, "the import failed"
print(f"{label}: vaultfile's own CPU {cpu:.2f} s")
PY
}
for mode in cat linger; do
  if [ $mode = cat ]; then printf '#!/bin/sh\nexec cat\n'; else printf '#!/bin/sh\ncat\nexec 1>&-\nsleep 0.05\n'; fi > "$work/bin/gpg"
  chmod +x "$work/bin/gpg"
  measure "$count files, gpg $mode, reference" "$reference"
  measure "$count files, gpg $mode, vaultfile" "$vf"
done
