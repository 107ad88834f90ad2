#!/usr/bin/env python3
"""Every verb that touches all entries, at 1,000 / 10,000 / 100,000 entries (issue 17).

Run by bench/run.py (`make bench`) or alone:
    bench/scale.py --vaultfile PATH --work DIR [--quick] [--sizes 1000,10000] [--markdown FILE]

Whole processes, interleaved within each size, medians; the yardsticks (`verify` for the verbs
that read every entry, `set` of one entry for the ones that write) run in the same rotation, so
every ratio is taken within one run. Each run is timed twice: wall clock, and CPU time (user + sys
of the child and everything it waited for, from getrusage(RUSAGE_CHILDREN) before and after). Every
ratio is printed on both, and the targets are judged on both; on a loaded machine (the load average
is printed with each size) wall time mostly measures waiting for a core or for fsync behind other
writers, and the CPU verdict is the one to read. Peak memory is GNU time's maximum RSS of one more run;
an import's is also given against its input (a 1pux's against its inflated export.data too).
Peers (keepassxc-cli, ansible-vault, sops) get a row where they are installed and have the verb.

Issue 44's memory rule (an import's peak within 2× its input) is judged on two figures, each with
its own verdict:
- above start-up ÷ input: (peak − the peak of `vaultfile --version`) ÷ the input's size. This holds
  a fixed part that no input costs: a 10-entry `import --format csv` peaks ~4 MB above `--version`
  (12.9 against 9.1 MB, the release build of 2026-11-28, h-1pux3). /proc/PID/smaps: the static
  binary's r-x mapping ~6.8 MB resident against ~4.6 MB for `--version` (the code the import,
  unlock and seal run, faulted in 64 KiB at a time by the kernel's fault-around, plus the loader's
  2.3 MB of relocations and symbols that every start reads), ~0.8 MB more of its RW segment (the
  3 MB `.rodata` lies there, read here and there), under 1 MB of heap and anonymous pages, 20 KiB
  mlocked (sodium_malloc's guarded keys), and Argon2's 1 MiB, which an import runs after its read
  (docs/PERFORMANCE.md, "1pux: the fixed part"). It also moves with where address randomization
  puts the 64 KiB windows, and with how the binary lies in the page cache: the kernel maps its code
  from cached pages only, as much as the cached block around a fault holds, 64 KiB for pages read in
  by running the binary and up to 1 MiB for a file read whole (`--version` 7.9–8.0 MB against 11.3
  MB). Before the peaks, the binary is dropped from the page cache and put back in one known state,
  by one run of each row (`--page-cache run`, the default) or by reading it whole (`--page-cache read`).
- growth per input byte: (peak at the largest size − peak at ten times fewer entries) ÷ (input at
  the largest − input at the smaller): what the input itself costs, the fixed part cancelled.
  When the smaller size is not among --sizes, its inputs are written and its imports' peaks
  measured for this alone.
Each import's peak, at both sizes, is the median of PEAK_RUNS runs (the fixed part is noisy).
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
import zipfile

import foreign_inputs

PASSWORD = "benchmark password"
DEVNULL = subprocess.DEVNULL
MIN_KDF = ["--kdf-memory", "1024K", "--kdf-iterations", "1", "--kdf-parallelism", "1", "--allow-weak-kdf"]
PREFIX_ENTRIES = 1000     # entries under app/ (exec --prefix) and references in the template (inject)
BATCH_LINES = 1000
PEAK_RUNS = 3             # runs whose median peak an import's memory figures use
MEMORY_RULE = 2.0         # issue 44: an import's peak within 2× its input


def parse_args(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--vaultfile", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--sizes")
    parser.add_argument("--runs", type=int)
    parser.add_argument("--only", help="comma-separated row labels to run (for profiling one verb)")
    parser.add_argument("--markdown")
    parser.add_argument("--page-cache", choices=("run", "read"), default="run",
                        help="the binary's pages before the peaks: faulted in by one run of each row (run), or read whole (read)")
    return parser.parse_args(argv)


# MARK: - Running and timing

def forget_state():
    """Copies of one vault are rolled back on purpose here: the state folder of the runs is emptied."""
    if "VAULTFILE_STATE_DIR" in os.environ:
        shutil.rmtree(os.environ["VAULTFILE_STATE_DIR"], ignore_errors=True)


def children_cpu():
    """User + sys seconds of every child this process has waited for (and of their waited-for children)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def execute(cmd, stdin=None, setup=None):
    """Runs `cmd` (stdin: a file path or None) after the untimed `setup`; returns (wall, cpu) seconds."""
    (setup or forget_state)()
    os.sync()
    with open(stdin or os.devnull, "rb") as source:
        cpu = children_cpu()
        start = time.perf_counter()
        result = subprocess.run(cmd, stdin=source, stdout=DEVNULL, stderr=subprocess.PIPE)
        elapsed = time.perf_counter() - start
        cpu = children_cpu() - cpu
    if result.returncode not in (0,):
        sys.exit(f"bench: {' '.join(cmd)} failed ({result.returncode}): {result.stderr.decode()[-400:]}")
    return elapsed, cpu


def settle_page_cache(binary, mode, rows):
    """Puts the binary's pages in the page cache in one known state before peaks are measured, as
    a peak moves with that state rather than with the command: the kernel maps a binary's code from
    the page cache only, and as many pages at once as the cached block holds (measured with
    /proc/PID/pagemap, kernel 6.18: `--version` 7.9-8.0 MB after runs, 8.9 MB right after the
    build wrote the file, 11.3 MB after a whole read). First the file is dropped from the cache
    (posix_fadvise DONTNEED; pages a running process maps stay). Then:
    - "run" (the default; a binary as the system loads it when it is run, as after a reboot): every
      row runs once, unmeasured, so that each command's faults read its pages in, a read-around
      window at a time, and a fault maps the 64 KiB around it;
    - "read": the file is read whole, as a copy, backup or checksum reads it; the page cache then
      holds it in blocks of up to 1 MiB (large folios), and a fault maps the whole block."""
    fd = os.open(binary, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    if mode == "read":
        with open(binary, "rb") as f:
            while f.read(1 << 20):
                pass
        return
    execute([binary, "--version"])
    for cmd, stdin, setup in rows:
        execute(cmd, stdin, setup)


def peak_kib(work, cmd, stdin=None, setup=None):
    report = f"{work}/time.out"
    execute(["/usr/bin/time", "-f", "%M", "-o", report] + cmd, stdin, setup)
    with open(report) as f:
        return int(f.read().split()[-1])


def median_peak_kib(work, cmd, stdin=None, setup=None):
    return statistics.median(peak_kib(work, cmd, stdin, setup) for _ in range(PEAK_RUNS))


def is_import(label):
    return label.startswith("import ")


def measure(rows, runs, budget):
    """Interleaved runs of every row (label → (cmd, stdin, setup)); medians in seconds: wall time
    (label → seconds) and CPU time (label → seconds), each the median of its own samples."""
    samples = {label: [] for label in rows}
    for label, (cmd, stdin, setup) in rows.items():  # warm-up; a slow one counts as a sample
        elapsed = execute(cmd, stdin, setup)
        if elapsed[0] > 1.0:
            samples[label].append(elapsed)
    for _ in range(runs):
        for label, (cmd, stdin, setup) in rows.items():
            taken = samples[label]
            if len(taken) >= runs or (taken and sum(wall for wall, _ in taken) > budget):
                continue
            taken.append(execute(cmd, stdin, setup))
    wall = {label: statistics.median(w for w, _ in taken) for label, taken in samples.items()}
    cpu = {label: statistics.median(c for _, c in taken) for label, taken in samples.items()}
    return wall, cpu


def ms(seconds):
    return f"{seconds * 1000:,.1f} ms" if seconds < 10 else f"{seconds:,.2f} s"


# MARK: - Inputs

def entry_names(n):
    """`app/entry-NNNNNN` for the first PREFIX_ENTRIES, `service-NNNNNN` after: sorted as created."""
    return [f"app/entry-{i:06d}" if i < PREFIX_ENTRIES else f"service-{i:06d}" for i in range(n)]


def native_json(n):
    return {"vaultfile_export": 1, "entries": [
        {"name": name, "value": f"value-{i:06d}-{os.urandom(9).hex()}", "fields": {"username": f"user{i}"},
         "created": 1700000000000, "modified": 1700000000000} for i, name in enumerate(entry_names(n))]}


def write_inputs(work, n, document):
    """Every import format holding the same n entries, and the template, batch script and sops file."""
    entries = document["entries"]
    with open(f"{work}/in-{n}.json", "w") as f:
        json.dump(document, f)
    with open(f"{work}/in-{n}.env", "w") as f:
        for e in entries:
            f.write(f'{e["name"].replace("/", "_").replace("-", "_").upper()}="{e["value"]}"\n')
    with open(f"{work}/in-{n}.csv", "w") as f:
        f.write("name,value,username\r\n")
        for e in entries:
            f.write(f'{e["name"]},{e["value"]},{e["fields"]["username"]}\r\n')
    with open(f"{work}/in-{n}.kpxc.csv", "w") as f:
        f.write('"Group","Title","Username","Password","URL","Notes","TOTP","Icon","Last Modified","Created"\n')
        for e in entries:
            f.write(f'"Root","{e["name"].replace("/", "-")}","{e["fields"]["username"]}","{e["value"]}","","","","0",'
                    '"2023-11-14T22:13:20Z","2023-11-14T22:13:20Z"\n')
    with open(f"{work}/in-{n}.bitwarden.json", "w") as f:
        json.dump({"encrypted": False, "folders": [], "items": [
            {"type": 1, "name": e["name"].replace("/", "-"), "login": {"username": e["fields"]["username"], "password": e["value"]},
             "revisionDate": "2023-11-14T22:13:20.000Z", "creationDate": "2023-11-14T22:13:20.000Z"} for e in entries]}, f)
    foreign_inputs.write(work, n, entries)
    with open(f"{work}/template-{n}", "w") as f:
        for name in entry_names(n)[:PREFIX_ENTRIES]:
            f.write(f"{name.upper()}={{{{ vf://{name} }}}} user={{{{ vf://{name}#username }}}}\n")
    with open(f"{work}/batch-{n}", "w") as f:
        for i in range(BATCH_LINES):
            f.write(f"set added/batch-{i:04d} --value 'batch value {i}'\n")
    with open(f"{work}/in-{n}.yaml", "w") as f:
        for e in entries:
            f.write(f'{e["name"].replace("/", "_")}: "{e["value"]}"\n')


def prepare(vf, work, n, pw):
    """The inputs of n entries, the vault holding them, and its KDBX export (the `import kdbx` row's input)."""
    write_inputs(work, n, native_json(n))
    make_vault(vf, work, f"{work}/vf-{n}.vault", n, pw)
    subprocess.run([vf, "export", "--format", "kdbx", "--out", f"{work}/vf-{n}.kdbx", "--overwrite", "--new-password-file", pw]
                   + MIN_KDF + ["--vault", f"{work}/vf-{n}.vault", "--password-file", pw], check=True, stdout=DEVNULL, stderr=DEVNULL)


def make_vault(vf, work, path, n, pw):
    subprocess.run([vf, "init", "--vault", path, "--password-file", pw] + MIN_KDF, check=True, stdout=DEVNULL, stderr=DEVNULL)
    if n:
        subprocess.run([vf, "import", "--vault", path, "--password-file", pw, "--format", "json", f"{work}/in-{n}.json"],
                       check=True, stdout=DEVNULL, stderr=DEVNULL)


# MARK: - The rows

def rows_for(vf, work, n, pw):
    """label → (kind, cmd, stdin, setup); kind is the yardstick the row is judged against."""
    vault = f"{work}/vf-{n}.vault"
    unlock = ["--vault", vault, "--password-file", pw]
    scratch = f"{work}/scratch-{n}.vault"
    empty = f"{work}/empty.vault"

    def fresh_copy(source):
        def setup():
            forget_state()
            shutil.copyfile(source, scratch)
        return setup

    def write_to(path):
        return ["--vault", scratch, "--password-file", pw]

    rows = {
        "verify": ("floor-read", [vf, "verify"] + unlock, None, None),
        "set one": ("floor-write", [vf, "set", "added/one"] + write_to(scratch), f"{work}/one-value", fresh_copy(vault)),
        "list": ("read", [vf, "list"] + unlock, None, None),
        "list --json": ("read", [vf, "list", "--json"] + unlock, None, None),
        "search (names)": ("read", [vf, "search", "entry-0009"] + unlock, None, None),
        "search --values": ("read", [vf, "search", "--values", "user99"] + unlock, None, None),
        "search --regex": ("read", [vf, "search", "--regex", "^app/entry-0+99"] + unlock, None, None),
        "export json": ("read", [vf, "export", "--format", "json"] + unlock, None, None),
        "export dotenv": ("read", [vf, "export", "--format", "dotenv"] + unlock, None, None),
        "export csv": ("read", [vf, "export", "--format", "csv"] + unlock, None, None),
        "git textconv": ("read", [vf, "git", "textconv", "--password-file", pw, vault], None, None),
        f"inject ({min(n, PREFIX_ENTRIES):,} refs ×2)": ("read", [vf, "inject"] + unlock, f"{work}/template-{n}", None),
        f"exec --prefix ({min(n, PREFIX_ENTRIES):,})": ("read", [vf, "exec", "--prefix", "app/"] + unlock + ["--", "true"], None, None),
        f"batch ({BATCH_LINES:,} set lines)": ("write", [vf, "batch"] + write_to(scratch), f"{work}/batch-{n}", fresh_copy(vault)),
        "git merge": ("write", [vf, "git", "merge", "--password-file", pw, f"{work}/base-{n}.vault", scratch,
                                f"{work}/theirs-{n}.vault"], None, fresh_copy(f"{work}/ours-{n}.vault")),
    }
    for label, fmt, suffix in (("import json", "json", "json"), ("import dotenv", "dotenv", "env"), ("import csv", "csv", "csv"),
                               ("import keepassxc-csv", "keepassxc-csv", "kpxc.csv"),
                               ("import bitwarden-json", "bitwarden-json", "bitwarden.json")) + tuple(foreign_inputs.ROWS):
        rows[label] = ("write", [vf, "import", "--format", fmt] + write_to(scratch) + [f"{work}/in-{n}.{suffix}"], None,
                       fresh_copy(empty))
    # Issue 45: a KDBX 4 database (Argon2id 1 MiB, what export writes with MIN_KDF) in and out.
    kdbx = f"{work}/vf-{n}.kdbx"
    rows["import kdbx"] = ("write", [vf, "import", "--format", "kdbx", "--kdbx-password-file", pw] + write_to(scratch) + [kdbx], None,
                           fresh_copy(empty))
    rows["export kdbx"] = ("read", [vf, "export", "--format", "kdbx", "--out", f"{work}/out-{n}.kdbx", "--overwrite",
                                    "--new-password-file", pw] + MIN_KDF + unlock, None, None)
    return rows


def peer_rows(work, n, pw):
    """Peers that are installed, with the verbs they have."""
    rows = {}
    if shutil.which("ansible-vault"):
        path = f"{work}/ansible-{n}.yml"
        rows["ansible-vault view"] = ("read", ["ansible-vault", "view", "--vault-password-file", pw, path], None, None)
        rows["ansible-vault encrypt"] = ("write", ["ansible-vault", "encrypt", "--vault-password-file", pw, "--output",
                                                   f"{work}/ansible-out.yml", f"{work}/in-{n}.yaml"], None,
                                         lambda: os.path.exists(f"{work}/ansible-out.yml") and os.unlink(f"{work}/ansible-out.yml"))
    if shutil.which("sops") and shutil.which("age-keygen"):
        rows["sops decrypt"] = ("read", ["sops", "--decrypt", f"{work}/sops-{n}.yaml"], None, None)
        rows["sops encrypt"] = ("write", ["sops", "--encrypt", "--age", open(f"{work}/age.pub").read().strip(),
                                          f"{work}/in-{n}.yaml"], None, None)
    if shutil.which("keepassxc-cli") and os.path.exists(f"{work}/kp-{n}.kdbx"):
        rows["keepassxc-cli export csv"] = ("read", ["sh", "-c", f"keepassxc-cli export -q -f csv {work}/kp-{n}.kdbx < {work}/pwline"],
                                            None, None)
    if shutil.which("keepassxc-cli") and os.path.exists(f"{work}/vf-{n}.kdbx"):
        # The KDBX 4 database of the `import kdbx` row, exported by keepassxc-cli (issue 45's yardstick).
        rows["keepassxc-cli export xml (kdbx 4)"] = ("read", ["sh", "-c", f"keepassxc-cli export -q -f xml {work}/vf-{n}.kdbx < {work}/pwline"],
                                                     None, None)
    if shutil.which("keepassxc-cli") and os.path.exists(f"{work}/kp-{n}.xml"):
        # The same entries from KeePass XML into a new database (keepassxc-cli has no CSV import).
        out = f"{work}/kp-import.kdbx"
        rows["keepassxc-cli import xml"] = ("write", ["sh", "-c", f"keepassxc-cli import -q -p {work}/kp-{n}.xml {out} < {work}/pwtwice"],
                                            None, lambda: os.path.exists(out) and os.unlink(out))
    return rows


def prepare_peers(work, n, pw):
    if shutil.which("ansible-vault"):
        shutil.copyfile(f"{work}/in-{n}.yaml", f"{work}/ansible-{n}.yml")
        subprocess.run(["ansible-vault", "encrypt", "--vault-password-file", pw, f"{work}/ansible-{n}.yml"], check=True,
                       stdout=DEVNULL, stderr=DEVNULL)
    if shutil.which("sops") and shutil.which("age-keygen"):
        if not os.path.exists(f"{work}/age.key"):
            subprocess.run(["age-keygen", "-o", f"{work}/age.key"], check=True, stderr=DEVNULL)
            with open(f"{work}/age.pub", "w") as f:
                f.write(subprocess.run(["age-keygen", "-y", f"{work}/age.key"], capture_output=True, text=True).stdout)
        os.environ["SOPS_AGE_KEY_FILE"] = f"{work}/age.key"
        with open(f"{work}/sops-{n}.yaml", "w") as f:
            subprocess.run(["sops", "--encrypt", "--age", open(f"{work}/age.pub").read().strip(), f"{work}/in-{n}.yaml"],
                           stdout=f, check=True, stderr=DEVNULL)
    if shutil.which("keepassxc-cli"):
        # A KeePass XML file through `keepassxc-cli import -p` (the password asked twice; without -p
        # keepassxc-cli 2.7 makes no key and creates nothing).
        from xml.sax.saxutils import escape
        with open(f"{work}/pwline", "w") as f:
            f.write(PASSWORD + "\n")
        with open(f"{work}/pwtwice", "w") as f:
            f.write(PASSWORD + "\n" + PASSWORD + "\n")
        with open(f"{work}/kp-{n}.xml", "w") as f:
            f.write("<KeePassFile><Root><Group><Name>Root</Name>")
            for line in open(f"{work}/in-{n}.yaml"):
                key, value = line.rstrip("\n").split(": ", 1)
                f.write(f"<Entry><String><Key>Title</Key><Value>{escape(key)}</Value></String>"
                        f"<String><Key>Password</Key><Value>{escape(value.strip(chr(34)))}</Value></String></Entry>")
            f.write("</Group></Root></KeePassFile>")
        if os.path.exists(f"{work}/kp-{n}.kdbx"):
            os.unlink(f"{work}/kp-{n}.kdbx")
        subprocess.run(["sh", "-c", f"keepassxc-cli import -q -p {work}/kp-{n}.xml {work}/kp-{n}.kdbx < {work}/pwtwice"],
                       check=False, stdout=DEVNULL, stderr=DEVNULL)


# MARK: - The run

def run(args, out):
    vf, work = args.vaultfile, args.work
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else ([1000, 10000] if args.quick else [1000, 10000, 100000])
    runs = args.runs or (3 if args.quick else 5)
    budget = 4.0 if args.quick else 8.0
    only = set(args.only.split(",")) if args.only else None
    os.makedirs(work, exist_ok=True)
    pw = f"{work}/pw"
    os.environ["VAULTFILE_STATE_DIR"] = f"{work}/state"
    with open(pw, "w") as f:
        f.write(PASSWORD)
    with open(f"{work}/one-value", "w") as f:
        f.write("new value")
    # A work folder used before: its vaults are made anew (init refuses an existing file).
    for name in os.listdir(work):
        if name.endswith((".vault", ".vault.lock")):
            os.unlink(os.path.join(work, name))
    subprocess.run([vf, "init", "--vault", f"{work}/empty.vault", "--password-file", pw] + MIN_KDF, check=True,
                   stdout=DEVNULL, stderr=DEVNULL)
    results = {}
    for n in sizes:
        prepare(vf, work, n, pw)
        # git merge: two sides that each changed one entry of the same base.
        shutil.copyfile(f"{work}/vf-{n}.vault", f"{work}/base-{n}.vault")
        for side in ("ours", "theirs"):
            forget_state()
            shutil.copyfile(f"{work}/vf-{n}.vault", f"{work}/{side}-{n}.vault")
            subprocess.run([vf, "set", f"added/{side}", "--vault", f"{work}/{side}-{n}.vault", "--password-file", pw],
                           input=side.encode(), check=True, stdout=DEVNULL, stderr=DEVNULL)
        prepare_peers(work, n, pw)
        rows = rows_for(vf, work, n, pw)
        rows.update(peer_rows(work, n, pw))
        if only:
            rows = {label: row for label, row in rows.items() if label in only or label in ("verify", "set one")}
        load_before = os.getloadavg()
        medians, cpus = measure({label: row[1:] for label, row in rows.items()}, runs, budget)
        load_after = os.getloadavg()
        settle_page_cache(vf, args.page_cache, [row[1:] for label, row in rows.items() if not label.startswith(("ansible", "sops", "keepassxc"))])
        peaks = {label: (median_peak_kib if is_import(label) else peak_kib)(work, *row[1:]) for label, row in rows.items()
                 if not label.startswith(("ansible", "sops", "keepassxc"))}
        results[n] = {"rows": rows, "medians": medians, "cpu": cpus, "peaks": peaks, "file": os.path.getsize(f"{work}/vf-{n}.vault"),
                      "load": (load_before, load_after)}
        print(f"scale: {n:,} entries measured (load average {load_before[0]:.1f} before, {load_after[0]:.1f} after)",
              file=sys.stderr, flush=True)

    startup = min(peak_kib(work, [vf, "--version"]) for _ in range(3))
    largest = sizes[-1]
    # Growth per input byte: each import's peak at ten times fewer entries too (measured here when
    # that size was not run).
    smaller = largest // 10
    if smaller in results:
        smaller_peaks = results[smaller]["peaks"]
    else:
        prepare(vf, work, smaller, pw)
        smaller_rows = rows_for(vf, work, smaller, pw)
        smaller_peaks = {label: median_peak_kib(work, *row[1:]) for label, row in smaller_rows.items()
                         if is_import(label) and label in results[largest]["rows"]}
    loads = "; ".join(f"{n:,}: {results[n]['load'][0][0]:.1f} → {results[n]['load'][1][0]:.1f}" for n in sizes)
    out(f"Vaults of {', '.join(f'{n:,}' for n in sizes)} entries (name, value and a username field each; Argon2id "
        "1 MiB t=1 p=1). Medians of interleaved runs of whole processes. Yardsticks in the same rotation: "
        "`verify` (unlock and check every record) for the verbs that read every entry, `set` of one entry for "
        "the verbs that write. The size columns are wall time; `CPU` is user + sys time of the process at the "
        "largest size. Each ratio to its yardstick is given on both, and each target is judged on both "
        "(wall and CPU); under load, wall time is mostly waiting for a core or for fsync, and the CPU verdict is "
        f"the one to read. Load average (1 minute) before → after each size's runs: {loads}. "
        "Growth: time at the largest size ÷ time at ten times fewer entries (wall; CPU in brackets). "
        f"Peak: GNU time's maximum RSS above what `vaultfile --version` occupies ({startup:,} KiB); for an import, "
        f"the median of {PEAK_RUNS} runs, ÷ its input, and its growth per input byte: (peak at {largest:,} − peak at "
        f"{smaller:,} entries) ÷ (input at {largest:,} − input at {smaller:,}), the memory the input costs without "
        "the fixed part (the code an import runs, its unlock and seal).")
    out()
    header = ("| verb | " + " | ".join(f"{n:,}" for n in sizes) + f" | CPU {largest:,} | growth | ÷ yardstick wall | ÷ yardstick CPU "
              "| target | peak above start-up | peak growth ÷ input growth |")
    out(header)
    out("|---|" + "---:|" * (len(sizes) + 7))
    memory_verdicts = []
    floor = {"read": "verify", "write": "set one", "floor-read": None, "floor-write": None}
    targets = {"read": 3.0, "write": 4.0}
    verdicts = []
    for label, row in results[largest]["rows"].items():
        kind = row[0]
        times = [results[n]["medians"].get(label) for n in sizes]
        cpu_times = [results[n]["cpu"].get(label) for n in sizes]
        cells = [ms(t) if t is not None else "—" for t in times]
        growth = times[-1] / times[-2] if len(times) > 1 and times[-2] else None
        cpu_growth = cpu_times[-1] / cpu_times[-2] if len(cpu_times) > 1 and cpu_times[-2] else None
        yard = floor[kind]
        ratio = times[-1] / results[largest]["medians"][yard] if yard else None
        yard_cpu = results[largest]["cpu"][yard] if yard else None
        cpu_ratio = cpu_times[-1] / yard_cpu if yard and yard_cpu else None
        target = targets.get(kind)
        if label.startswith("batch") or label == "git merge":
            target = 3.0 if label.startswith("batch") else 4.0
        if label.startswith(("ansible", "sops", "keepassxc")):
            target = None
        peak = results[largest]["peaks"].get(label)
        peak_text = f"{(peak - startup):,} KiB" if peak is not None else "—"
        # Issue 44: an import's peak memory against its input (target: within 2×), above start-up
        # and as growth per input byte.
        source = row[1][-1]
        growth_cell = "—"
        if peak is not None and is_import(label) and os.path.isfile(source):
            above = (peak - startup) * 1024 / os.path.getsize(source)
            peak_text += f" ({above:.2f}× input"
            small_source = source.replace(f"-{largest}.", f"-{smaller}.")
            per_byte = None
            if smaller_peaks.get(label) is not None and os.path.isfile(small_source):
                per_byte = (peak - smaller_peaks[label]) * 1024 / (os.path.getsize(source) - os.path.getsize(small_source))
                growth_cell = f"{per_byte:.2f}×"
            if source.endswith(".1pux"):
                # A 1pux is a ZIP: the JSON its reader parses is export.data, inflated.
                inflated, small_inflated = (zipfile.ZipFile(path).getinfo("export.data").file_size for path in (source, small_source))
                peak_text += f", {(peak - startup) * 1024 / inflated:.2f}× its export.data"
                if per_byte is not None:
                    growth_cell += f" ({(peak - smaller_peaks[label]) * 1024 / (inflated - small_inflated):.2f}× its export.data)"
            peak_text += ")"
            # KDBX import has its own rule (issue 45: 2 × (vault + KDBX file)), judged in docs/PERFORMANCE.md.
            if label != "import kdbx":
                memory_verdicts.append((label, above <= MEMORY_RULE, per_byte is not None and per_byte <= MEMORY_RULE))
        growth_text = (f"{growth:.1f}" if growth else "—") + (f" ({cpu_growth:.1f})" if cpu_growth else "")
        out(f"| {label} | {' | '.join(cells)} | {ms(cpu_times[-1]) if cpu_times[-1] is not None else '—'} | {growth_text} | "
            f"{f'{ratio:.2f}×' if ratio else '—'} | {f'{cpu_ratio:.2f}×' if cpu_ratio else '—'} | "
            f"{f'≤ {target:g}×' if target else '—'} | {peak_text} | {growth_cell} |")
        if target and ratio:
            verdicts.append((label, ratio <= target and (growth is None or growth <= 12),
                             cpu_ratio is not None and cpu_ratio <= target and (cpu_growth is None or cpu_growth <= 12)))
    out()
    for clock, index in (("CPU time", 2), ("wall time", 1)):
        missed = [verdict[0] for verdict in verdicts if not verdict[index]]
        out(f"Targets of issue 17 at {largest:,} entries on {clock} (growth ≤ 12 and ratio ≤ target): "
            + (f"{len(verdicts) - len(missed)} of {len(verdicts)} met" + (f"; missed: {', '.join(missed)}" if missed else "") + "."))
    if memory_verdicts:
        for figure, index in (("peak above start-up ÷ input", 1), ("peak growth ÷ input growth", 2)):
            missed = [verdict[0] for verdict in memory_verdicts if not verdict[index]]
            out(f"Issue 44's memory rule at {largest:,} entries on {figure} (≤ {MEMORY_RULE:g}×): "
                f"{len(memory_verdicts) - len(missed)} of {len(memory_verdicts)} met" + (f"; missed: {', '.join(missed)}" if missed else "") + ".")
    return results


if __name__ == "__main__":
    arguments = parse_args()
    lines = []

    def emit(text=""):
        print(text, flush=True)
        lines.append(text)

    run(arguments, emit)
    if arguments.markdown:
        with open(arguments.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")
