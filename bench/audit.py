#!/usr/bin/env python3
"""vaultfile audit --hibp against keepassxc-cli analyze --hibp, side by side in one run.

A sorted Pwned Passwords file of N lines (100 million, about 4.4 GB; --quick: 1 million) is
generated once into a cache folder (bench/hibp-gen.c, deterministic) with every tenth password
of the vault planted in it. A vault and a KeePass database of the same E passwords (10,000;
--quick 1,000) are then checked against it: vaultfile's time (the target: <= 2 s at full size),
its peak memory against a run on a 1,000-line file (flat: the file is never read whole), and
keepassxc-cli's time, the reference, which reads the whole file. Both must report the same
breached entries.
"""
import argparse, hashlib, json, os, resource, subprocess, sys, tempfile, time

def run(command, stdin=b"", check=True):
    started = time.monotonic()
    result = subprocess.run(["/usr/bin/time", "-f", "%M"] + command, input=stdin, capture_output=True)
    elapsed = time.monotonic() - started
    if check and result.returncode not in (0, 8):
        sys.exit(f"bench: {' '.join(command)} failed ({result.returncode}): {result.stderr.decode(errors='replace')}")
    peak = int(result.stderr.decode().strip().splitlines()[-1])  # KiB, GNU time's %M
    return elapsed, peak, result.stdout

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--vaultfile", required=True)
    parser.add_argument("--generator", required=True)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--cache", default=os.environ.get("VAULTFILE_BENCH_CACHE", os.path.expanduser("~/.cache/vaultfile-bench")))
    args = parser.parse_args()
    lines, entries = (1_000_000, 1_000) if args.quick else (100_000_000, 10_000)
    passwords = [f"bench-password-{index:05d}" for index in range(entries)]
    planted = sorted(f"{hashlib.sha1(p.encode()).hexdigest().upper()}:{1000 + i}" for i, p in enumerate(passwords) if i % 10 == 0)

    os.makedirs(args.cache, exist_ok=True)
    listed = os.path.join(args.cache, f"hibp-sorted-{lines}.txt")
    plant_file = os.path.join(args.cache, f"hibp-planted-{lines}.txt")
    wanted = "".join(line + "\n" for line in planted)
    if not os.path.exists(listed) or not os.path.exists(plant_file) or open(plant_file).read() != wanted:
        print(f"bench: generating {listed} ({lines:,} lines; once, then cached)", file=sys.stderr)
        with open(plant_file, "w") as out: out.write(wanted)
        subprocess.run([args.generator, str(lines), plant_file, listed + ".part"], check=True)
        os.rename(listed + ".part", listed)
    size = os.path.getsize(listed)

    work = tempfile.mkdtemp(prefix="vaultfile-bench-audit-")
    env = dict(os.environ, VAULTFILE_NO_AGENT="1", VAULTFILE_STATE_DIR=f"{work}/state", VAULTFILE_QUIET_WEAK_PASSWORD="1", VAULTFILE_QUIET_WEAK_KDF="1")
    os.environ.update(env)
    with open(f"{work}/pw", "w") as out: out.write("bench-vault-password")
    vault = f"{work}/bench.vault"
    unlock = ["--vault", vault, "--password-file", f"{work}/pw"]
    subprocess.run([args.vaultfile, "init", *unlock, "--kdf-memory", "8K", "--kdf-iterations", "1", "--kdf-parallelism", "1",
                    "--allow-weak-kdf", "--unsigned"], check=True, capture_output=True)
    with open(f"{work}/entries.json", "w") as out:
        json.dump({"vaultfile_export": 1, "entries": [{"name": f"site-{i:05d}", "value": p, "created": 1700000000000,
                                                       "modified": 1700000000000} for i, p in enumerate(passwords)]}, out)
    subprocess.run([args.vaultfile, "import", "--format", "json", f"{work}/entries.json", *unlock], check=True, capture_output=True)

    audit = [args.vaultfile, "audit", "--only", "breached", "--json", *unlock]
    small = f"{work}/small.txt"
    subprocess.run([args.generator, "1000", plant_file, small], check=True)
    _, small_peak, _ = run(audit + ["--hibp", small])
    cold, _, _ = run(audit + ["--hibp", listed])
    warm, peak, out = run(audit + ["--hibp", listed])
    ours = {o["name"]: o["breached"]["count"] for o in json.loads(out)}

    theirs, keepassxc = None, None
    if subprocess.run(["sh", "-c", "command -v keepassxc-cli"], capture_output=True).returncode == 0:
        with open(f"{work}/kp.xml", "w") as out:
            out.write('<?xml version="1.0" encoding="UTF-8"?><KeePassFile><Meta><Generator>bench</Generator></Meta><Root><Group>'
                      '<UUID>AAAAAAAAAAAAAAAAAAAAAA==</UUID><Name>Root</Name>')
            for i, p in enumerate(passwords):
                uuid = (i + 1).to_bytes(16, "big")
                import base64
                out.write(f"<Entry><UUID>{base64.b64encode(uuid).decode()}</UUID><String><Key>Title</Key><Value>site-{i:05d}</Value></String>"
                          f"<String><Key>Password</Key><Value>{p}</Value></String></Entry>")
            out.write("</Group></Root></KeePassFile>")
        subprocess.run(["keepassxc-cli", "import", "-q", "-p", f"{work}/kp.xml", f"{work}/kp.kdbx"], input=b"kpw\nkpw\n", check=True, capture_output=True)
        keepassxc, kp_peak, kp_out = run(["keepassxc-cli", "analyze", "-q", "--hibp", listed, f"{work}/kp.kdbx"], stdin=b"kpw\n")
        theirs = {}
        for line in kp_out.decode().splitlines():
            if line.startswith("Password for '"):
                name = line[len("Password for '"):].split("'")[0]
                theirs[name] = next(int(word) for word in line.split() if word.isdigit())

    print(f"audit --hibp: {lines:,} lines ({size / 1e9:.2f} GB), {entries:,} entries, {len(planted):,} planted")
    print(f"  vaultfile audit       {warm:7.3f} s (first run {cold:.3f} s)  peak {peak / 1024:.1f} MiB "
          f"(1,000-line file: {small_peak / 1024:.1f} MiB)  found {len(ours):,}")
    if keepassxc is not None:
        print(f"  keepassxc-cli analyze {keepassxc:7.3f} s  peak {kp_peak / 1024:.1f} MiB  found {len(theirs):,}  "
              f"ratio vaultfile/keepassxc {warm / keepassxc:.4f}")
        if ours != theirs: sys.exit("bench: vaultfile and keepassxc-cli report different breaches")
    else:
        print("  keepassxc-cli absent: no reference")
    if len(ours) != len(planted): sys.exit(f"bench: vaultfile found {len(ours)} of {len(planted)} planted")
    target = 2.0
    print(f"  target <= {target} s: {'met' if warm <= target else 'MISSED'}; memory flat: "
          f"{'yes' if peak - small_peak < 16 * 1024 else 'NO'} ({(peak - small_peak) / 1024:+.1f} MiB)")
    subprocess.run(["rm", "-rf", work])

if __name__ == "__main__":
    main()
