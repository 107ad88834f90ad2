#!/usr/bin/env python3
"""Differential of `vaultfile import --format keepass-xml|kdbx` between two binaries over given files.

    files_diff.py OLD NEW [--work DIR] FILE...   (FILE.kdbx imported as kdbx with the fixtures' password)

Each file is imported by both binaries into copies of the same vault (empty; keeping history), plain,
with --json and with --dry-run; exit status, stdout, stderr, `export --format json` (times of "now"
masked), `list --long` and the history of the first names are compared.
"""
import argparse, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import difftools as diff  # noqa: E402
KDBX_PASSWORD = "kdbx-fixture"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old"); ap.add_argument("new"); ap.add_argument("files", nargs="+")
    ap.add_argument("--work", default="/tmp/keepass-files-diff")
    a = ap.parse_args()
    pw, old, new = diff.prepare_work(a)
    kpw = os.path.join(a.work, "kdbx-pw")
    open(kpw, "w").write(KDBX_PASSWORD)
    vaults = diff.base_vaults(old, pw, a.work, [("empty", [], False), ("hist", ["--keep-history", "3"], False)])
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
                    diff.print_difference(results[0], results[1])
                elif opts == [] and kind == "empty":
                    first = results[0][2].decode(errors="replace").strip().split("\n")[-1][:150]
                    print("same  %-60s rc=%d  %s" % (os.path.basename(file), results[0][0], first))
    print("done: %d cases, %d differ; old exit statuses %s" % (cases, diffs, statuses))
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
