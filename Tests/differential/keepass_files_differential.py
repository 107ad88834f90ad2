#!/usr/bin/env python3
"""Differential of `vaultfile import --format keepass-xml|kdbx` between two binaries over given files.

    files_diff.py OLD NEW [--work DIR] FILE...   (FILE.kdbx imported as kdbx with the fixtures' password)

Each file is imported by both binaries into copies of the same vault (empty; keeping history), plain,
with --json and with --dry-run; exit status, stdout, stderr, `export --format json` (times of "now"
masked), `list --long` and the history of the first names are compared.
"""
import argparse, importlib.util, json, os, re, shutil, sys, time

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("diff", os.path.join(here, "import_differential.py"))
diff = importlib.util.module_from_spec(spec); spec.loader.exec_module(diff)
KDBX_PASSWORD = "kdbx-fixture"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old"); ap.add_argument("new"); ap.add_argument("files", nargs="+")
    ap.add_argument("--work", default="/tmp/keepass-files-diff")
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    pw, kpw = os.path.join(a.work, "pw"), os.path.join(a.work, "kdbx-pw")
    open(pw, "w").write(diff.PW); open(kpw, "w").write(KDBX_PASSWORD)
    old, new = diff.Side("old", a.old, a.work), diff.Side("new", a.new, a.work)
    vaults = {}
    for kind, extra in (("empty", []), ("hist", ["--keep-history", "3"])):
        path = os.path.join(a.work, kind + ".vault")
        rc, _, err = old.run(["init", "--vault", path, "--password-file", pw] + diff.FAST + extra)
        assert rc == 0, err
        vaults[kind] = path
    cases = diffs = 0
    statuses = {}
    for file in map(os.path.abspath, a.files):
        fmt = "kdbx" if file.endswith(".kdbx") else "keepass-xml"
        for kind in vaults:
            for opts in ([], ["--json"], ["--dry-run"]):
                tail = opts + (["--kdbx-password-file", kpw] if fmt == "kdbx" else []) + [file]
                results = [side.imported(pw, vaults[kind], fmt, tail, history=8 if kind == "hist" else 0) for side in (old, new)]
                cases += 1
                statuses[results[0][0]] = statuses.get(results[0][0], 0) + 1
                if results[0] != results[1]:
                    diffs += 1
                    print("DIFF", file, kind, opts)
                    for label, x, y in zip(["status", "stdout", "stderr", "export status", "export", "export stderr", "list status", "list", "history"], results[0], results[1]):
                        if x != y: print("  %s:\n    old %r\n    new %r" % (label, x[:400] if isinstance(x, bytes) else x, y[:400] if isinstance(y, bytes) else y))
                elif opts == [] and kind == "empty":
                    first = results[0][2].decode(errors="replace").strip().split("\n")[-1][:150]
                    print("same  %-60s rc=%d  %s" % (os.path.basename(file), results[0][0], first))
    print("done: %d cases, %d differ; old exit statuses %s" % (cases, diffs, statuses))
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
