#!/usr/bin/env python3
"""Writes scripts/text-order.txt, the order in which the release link lays out vaultfile's code.

    scripts/text-order.py --binary PATH --map MAP [--out scripts/text-order.txt] [--entries 1000]
                          [--import-entries 20000]
    (`make text-order` builds the binary with its map and runs this.)

Why: the static binary holds about 19 MB of code, and a command runs 0.2-1.5 MB of it. The kernel
maps a binary's code 64 KiB around each page a command touches (its fault-around), so with that
code spread over the whole text a 10-entry `import --format csv` had 14 MB of it resident, as much
as its records at 100,000 entries (docs/PERFORMANCE.md, "Code layout"). Laid out so that the code
each command runs lies together, the same import maps a third less.

How: PATH is a release build made with function sections (scripts/build-release.sh makes every one
so, and writes the linker's map with LINK_MAP=MAP). Every row of bench/scale.py (each verb at 1,000
entries, every import format), the imports of SCALED_IMPORTS again at 20,000 entries (past one
record buffer: their records go to encrypted runs that the seal merges, and a 1pux's ZIP is read a
window at a time, code no import of 1,000 entries runs) and the commands a new user runs first
(--version, --help, init, get, ls, generate) run once under callgrind, on a stripped copy; each
address they executed is named by the code section holding it in the map. A section's place in the order: sections run by the same
set of commands form a group; first the group every command runs (start-up, unlock, seal), then
each next group the one whose set of commands is most like the last one's, so that a command's
code lies in few stretches; within a group, the order of the binary profiled. It prints, for each
command, how many 64 KiB windows its laid-out code falls in. The C archives' objects each have
their code in a section named after them (scripts/build-release.sh), and are ordered as whole
objects. An object's plain `.text` (code built without function sections: the Swift standard
library's one object) cannot be moved and is left out.
Names the linker does not find (a function renamed since) are skipped, so an old order file costs
memory, never correctness; run this again after a large change.
"""
import argparse
import bisect
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import scale  # noqa: E402  (bench/scale.py: its inputs and rows)


# MARK: - Running the commands

# The imports profiled once more at --import-entries (their labels end in " (scaled)"): a 1pux (the
# ZIP read a window at a time, export.data inflated a part at a time), a CSV and a JSON, each with
# its records in runs. Their code otherwise lies outside the order, each function's 64 KiB
# faulted in on its own (issue 44: a 1pux's peak above start-up is mostly code).
SCALED_IMPORTS = ("import 1pux", "import csv", "import json")

def extra_rows(vf, work, n, pw):
    """The first commands of a new user, beside scale.py's rows."""
    vault = f"{work}/vf-{n}.vault"
    unlock = ["--vault", vault, "--password-file", pw]
    return {
        "--version": [vf, "--version"],
        "--help": [vf, "--help"],
        "init": [vf, "init", "--vault", f"{work}/profile-init.vault", "--password-file", pw] + scale.MIN_KDF,
        "get": [vf, "get", scale.entry_names(n)[0]] + unlock,
        "ls": [vf, "ls"] + unlock,
        "generate": [vf, "generate"],
    }


def executed_addresses(callgrind_out, binary_name):
    """The instruction addresses executed inside the object named binary_name (callgrind --dump-instr=yes)."""
    names, inside, position, found = {}, False, 0, set()
    for line in open(callgrind_out, errors="replace"):
        if line.startswith(("ob=", "cob=")):
            m = re.match(r"c?ob=\((\d+)\)(?: (.*))?", line.rstrip("\n"))
            if m.group(2):
                names[m.group(1)] = m.group(2)
            if line.startswith("ob="):
                inside = binary_name in names.get(m.group(1), "")
            continue
        if not line or line[0] not in "0123456789+-*":
            continue
        token = line.split()[0]
        if token.startswith("0x"):
            position = int(token, 16)
        elif token[0] in "+-":
            position += int(token)
        elif token != "*":
            continue
        if inside:
            found.add(position)
    return found


def profile(binary, link_map, work, entries, import_entries):
    """label → the names of the code sections the command executed, and name → bytes (`SectionTable.sizes`)."""
    stripped = f"{work}/vaultfile-profiled"
    shutil.copyfile(binary, stripped)
    os.chmod(stripped, 0o755)
    subprocess.run(["strip", stripped], check=True)  # callgrind cannot read the unstripped debug info
    sections = SectionTable(link_map)

    pw = f"{work}/pw"
    with open(pw, "w") as f:
        f.write(scale.PASSWORD)
    with open(f"{work}/one-value", "w") as f:
        f.write("new value")
    os.environ["VAULTFILE_STATE_DIR"] = f"{work}/state"
    subprocess.run([stripped, "init", "--vault", f"{work}/empty.vault", "--password-file", pw] + scale.MIN_KDF,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    scale.prepare(stripped, work, entries, pw)
    for side in ("base", "ours", "theirs"):
        shutil.copyfile(f"{work}/vf-{entries}.vault", f"{work}/{side}-{entries}.vault")
    rows = {label: (cmd, stdin, setup) for label, (_, cmd, stdin, setup) in scale.rows_for(stripped, work, entries, pw).items()}
    rows.update({label: (cmd, None, None) for label, cmd in extra_rows(stripped, work, entries, pw).items()})
    if import_entries:
        scale.write_inputs(work, import_entries, scale.native_json(import_entries))
        scaled = scale.rows_for(stripped, work, import_entries, pw)
        rows.update({f"{label} (scaled)": (cmd, stdin, setup) for label, (_, cmd, stdin, setup) in scaled.items()
                     if label in SCALED_IMPORTS})

    executed = {}
    for label, (cmd, stdin, setup) in rows.items():
        if setup:
            setup()
        out = f"{work}/callgrind.out"
        with open(stdin, "rb") if stdin else open(os.devnull, "rb") as given:
            ended = subprocess.run(["valgrind", "--tool=callgrind", "--dump-instr=yes", f"--callgrind-out-file={out}"] + cmd,
                                   stdin=given, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if ended.returncode != 0:  # a failed command would profile its error path only
            sys.exit(f"text-order: {label} failed (status {ended.returncode}): {ended.stderr.decode(errors='replace')[-400:]}")
        ran = {sections.names[k] for k in sections.sections(executed_addresses(out, os.path.basename(stripped)))}
        print(f"text-order: {label}: {len(ran):,} code sections", file=sys.stderr, flush=True)
        executed[label] = ran
    return executed, sections.sizes()


class SectionTable:
    """The binary's input code sections by address, from the link's map (gold's -Map), to name the
    section an executed address lies in. Only sections of their own (`.text.NAME`: a function
    built with function sections) can be moved; an object's plain `.text` cannot."""

    def __init__(self, link_map):
        self.starts, self.ends, self.names = [], [], []
        pending = None
        for line in open(link_map, errors="replace"):
            if line.startswith(" .text"):
                parts = line.split()
                pending = parts[0]
                if len(parts) >= 3 and parts[1].startswith("0x"):
                    self._add(pending, parts[1], parts[2])
                    pending = None
            elif pending is not None:
                parts = line.split()
                if len(parts) >= 2 and parts[0].startswith("0x") and parts[1].startswith("0x"):
                    self._add(pending, parts[0], parts[1])
                pending = None
        order = sorted(range(len(self.starts)), key=lambda k: self.starts[k])
        self.starts = [self.starts[k] for k in order]
        self.ends = [self.ends[k] for k in order]
        self.names = [self.names[k] for k in order]

    def _add(self, name, start, size):
        size = int(size, 16)
        if size:
            self.starts.append(int(start, 16))
            self.ends.append(int(start, 16) + size)
            self.names.append(name)

    def sizes(self):
        """name → the bytes of the sections of that name (a local name can be several objects')."""
        sizes = {}
        for name, start, end in zip(self.names, self.starts, self.ends):
            sizes[name] = sizes.get(name, 0) + end - start
        return sizes

    def sections(self, addresses):
        """Indexes of the sections holding these addresses."""
        found = set()
        for address in addresses:
            k = bisect.bisect_right(self.starts, address) - 1
            if k >= 0 and address < self.ends[k]:
                found.add(k)
        return found


# MARK: - The order

WINDOW = 64 << 10  # the kernel's fault-around: a fault maps the 64 KiB around the page


def order(executed, sizes):
    """Section names: those run by the same set of commands form a group; the group every command
    runs comes first, then each next group is the one whose commands are most like the last one's
    (Jaccard similarity of the two sets; ties: the larger set, then the earlier command), so that
    each command's code lies in few runs of groups. An object's plain `.text` is left out (the
    linker cannot move part of it). executed: label → the names of the sections it ran; sizes:
    name → bytes, in the profiled binary's order (the order within a group)."""
    labels = sorted(executed)
    users = {}
    for index, label in enumerate(labels):
        for name in executed[label]:
            users.setdefault(name, []).append(index)
    place = {name: rank for rank, name in enumerate(sizes)}
    groups = {}
    for name in sorted((name for name in users if name != ".text"), key=lambda name: place[name]):
        groups.setdefault(tuple(users[name]), []).append(name)
    left = set(groups)
    chain = [max(left, key=lambda group: (len(group), -group[0]))]
    left.remove(chain[0])
    while left:
        last = set(chain[-1])

        def likeness(group):
            members = set(group)
            return (len(members & last) / len(members | last), len(group), [-index for index in group])

        chain.append(max(left, key=likeness))
        left.remove(chain[-1])
    return [name for group in chain for name in groups[group]]


def windows(names, executed, sizes):
    """label → the 64 KiB windows of the laid-out code (names in order, back to back) that its
    sections fall in: what the order costs each command in resident code, beside the code that
    cannot move."""
    place, offset = {}, 0
    for name in names:
        place[name] = (offset, offset + sizes[name])
        offset += sizes[name]
    counts = {}
    for label, ran in executed.items():
        touched = set()
        for name in ran:
            if name in place:
                start, end = place[name]
                touched.update(range(start // WINDOW, (end - 1) // WINDOW + 1))
        counts[label] = len(touched)
    return counts


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", help="a release build with function sections")
    parser.add_argument("--map", help="its link map (scripts/build-release.sh with LINK_MAP=FILE)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "text-order.txt"))
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--import-entries", type=int, default=20000,
                        help="the entries of the imports profiled past one record buffer (0: none)")
    parser.add_argument("--save-profile", help="also write what each command ran (JSON), for --from-profile")
    parser.add_argument("--from-profile", help="order from a saved profile instead of running the commands")
    args = parser.parse_args()
    if args.from_profile:
        with open(args.from_profile) as f:
            saved = json.load(f)
        executed, sizes = {label: set(names) for label, names in saved["executed"].items()}, saved["sizes"]
    else:
        if not args.binary or not args.map:
            sys.exit("text-order: --binary and --map are needed (or --from-profile)")
        if shutil.which("valgrind") is None:
            sys.exit("text-order: valgrind is needed (apt-get install -y valgrind)")
        with tempfile.TemporaryDirectory(prefix="vaultfile-text-order-") as work:
            executed, sizes = profile(os.path.abspath(args.binary), os.path.abspath(args.map), work, args.entries,
                                      args.import_entries)
        if args.save_profile:
            with open(args.save_profile, "w") as f:
                json.dump({"executed": {label: sorted(names) for label, names in executed.items()}, "sizes": sizes}, f)
    names = order(executed, sizes)
    with open(args.out, "w") as f:
        f.write("".join(line + "\n" for line in names))
    counts = windows(names, executed, sizes)
    for label in sorted(counts, key=lambda label: -counts[label]):
        print(f"text-order: {label}: its laid-out code in {counts[label]} windows of 64 KiB", file=sys.stderr)
    print(f"text-order: {len(names):,} code sections from {len(executed)} commands written to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
