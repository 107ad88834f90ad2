"""What the differentials of `vaultfile import` share (Tests/differential/*_differential.py).

The password and KDF options of their vaults, a work folder made anew, each binary run in a folder
of its own (`Side`), an import into a copy of a base vault read back, the base vaults themselves,
and a difference printed field by field. Imported by the scripts beside it, never run.
"""
import json
import os
import re
import shutil
import subprocess
import time

PW = "correct horse battery"
FAST = ["--kdf-memory", "8K", "--kdf-iterations", "1", "--kdf-parallelism", "1", "--allow-weak-kdf"]
# What `Side.imported` returns, in its order.
IMPORTED = ["status", "stdout", "stderr", "export status", "export", "export stderr", "list status", "list", "history"]
NOW_RE = re.compile(rb'("(?:created|modified)" : )(\d{13})')


def fresh_work(work):
    """WORK emptied, with its diffs/ folder and the password file; the password file's path."""
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "diffs"))
    pw = os.path.join(work, "pw")
    with open(pw, "w") as f:
        f.write(PW)
    return pw


def mask_now(export, start, end):
    """`export --format json`'s times between START and END (the run's milliseconds) as NOW."""
    def repl(m):
        t = int(m.group(2))
        return m.group(1) + (b"NOW" if start - 5 <= t <= end + 5 else m.group(2))
    return NOW_RE.sub(repl, export)


class Side:
    """One binary, run in WORK/NAME with a home and state folder of its own."""

    def __init__(self, name, binary, work):
        self.name, self.binary, self.dir = name, binary, os.path.join(work, name)
        os.makedirs(self.dir, exist_ok=True)
        self.state = os.path.join(self.dir, "state")
        os.makedirs(self.state, exist_ok=True)

    def forget_state(self):
        """Each case copies a base vault over the last one: the state folder (pinned members, seen
        generations) is emptied, so neither side refuses the copy as another vault at that path."""
        shutil.rmtree(self.state, ignore_errors=True)
        os.makedirs(self.state)

    def env(self):
        return {"PATH": "/usr/bin:/bin", "HOME": self.dir, "LANG": "C.UTF-8", "VAULTFILE_STATE_DIR": self.state,
                "VAULTFILE_NO_AGENT": "1", "VAULTFILE_ROLLBACK_CHECK": "off", "VAULTFILE_QUIET_WEAK_KDF": "1"}

    def run(self, args, stdin=b""):
        p = subprocess.run([self.binary] + args, input=stdin, capture_output=True, env=self.env(), timeout=300, cwd=self.dir)
        return p.returncode, p.stdout, p.stderr

    def imported(self, pw, vault, fmt, tail, stdin=b"", history=0):
        """`import --format FMT … TAIL` into a copy of `vault` (case.vault in this side's folder), and what it left
        (`IMPORTED`): its status, stdout and stderr; `export --format json`'s status, output (times of "now"
        masked) and stderr; `list --long`'s status and output (times masked); the history of the first
        `history` names."""
        self.forget_state()
        v = "case.vault"
        shutil.copyfile(vault, os.path.join(self.dir, v))
        start = int(time.time() * 1000)
        rc, out, err = self.run(["import", "--format", fmt, "--vault", v, "--password-file", pw] + tail, stdin)
        end = int(time.time() * 1000)
        rc2, exp, err2 = self.run(["export", "--format", "json", "--vault", v, "--password-file", pw])
        rc3, lst, _ = self.run(["list", "--long", "--vault", v, "--password-file", pw])
        lst = re.sub(rb"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d)?(\.\d+)?Z?", b"TIME", lst)
        hist = b""
        if history and rc == 0 and rc2 == 0:
            for n in [e["name"] for e in json.loads(exp)["entries"]][:history]:
                hist += b"|".join(x if not isinstance(x, int) else b"%d" % x for x in self.run(["history", n, "--vault", v, "--password-file", pw])) + b"\n"
            hist = re.sub(rb"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?Z?", b"TIME", hist)
        return rc, out, err, rc2, mask_now(exp, start, end), err2, rc3, lst, hist


def prepare_work(args):
    """WORK emptied (with its diffs/ folder), the password file in it, and the two sides."""
    pw = fresh_work(args.work)
    return pw, Side("old", args.old, args.work), Side("new", args.new, args.work)


def base_vaults(side, pw, folder, kinds, seed_doc=b""):
    """The base vaults every case copies, made by `side` in FOLDER: KINDS lists (kind, init options, seeded);
    a seeded vault imports SEED_DOC (vaultfile's JSON). kind → its path."""
    vaults = {}
    for kind, extra, seeded in kinds:
        path = os.path.join(folder, kind + ".vault")
        rc, _, err = side.run(["init", "--vault", path, "--password-file", pw] + FAST + extra)
        assert rc == 0, err
        if seeded:
            rc, _, err = side.run(["import", "--format", "json", "--vault", path, "--password-file", pw], seed_doc)
            assert rc == 0, err
        vaults[kind] = path
    return vaults


def print_difference(old, new, labels=IMPORTED, width=400):
    """Each field of two outcomes that differs, under its label, cut at WIDTH."""
    for label, x, y in zip(labels, old, new):
        if x != y:
            print("  %s:\n    old %r\n    new %r" % (label, x[:width] if isinstance(x, bytes) else x, y[:width] if isinstance(y, bytes) else y))
