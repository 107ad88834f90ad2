#!/usr/bin/env python3
"""Differential test of imports whose titles repeat (issue 44), between two binaries.

    Tests/differential/repeated_titles_differential.py OLD_BINARY NEW_BINARY [--cases N] [--seed S] [--work DIR]

Generates exports of the CSV formats of other managers (chrome-csv, firefox-csv, bitwarden-csv,
lastpass-csv, 1password-csv, dashlane-csv) in which most titles (Firefox: sites) repeat: accounts
that tie on username or URL or both (ordered then by a hash of the password), rows given twice,
NFC twins (`café`, `cafe\u0301`), titles that clean to the same name (`a/b`, `a-b`, ` a-b `), titles
already numbered (`site (2)`) or ending in `)`, titles without a name (the site or username is
taken), folders, controls, C1 and bidirectional characters in titles, usernames and sites (shown
escaped in the renaming lines), from a handful to a few thousand rows. Each is imported by both
binaries into copies of the same vault (empty, or holding `site`, `site (2)`, `mail (3)`…) with
and without `--prefix`, `--skip-existing`, `--overwrite`, `--dry-run` and `--json`, and the exit
status, stdout, stderr and the vault afterwards (`export --format json`, times of "now" masked)
are compared. Each case's rows are then shuffled and imported again by NEW: every name must hold
the same account as before (the export is the same), since numbers follow username, then URL,
never the file's order. Half the cases (`--sorted`) have their rows in title order, as a browser's
export by site, which a build reads once, holding one title's rows at a time.

Since att58 F1 an item whose title is exactly the source's ranks before every item whose title had
to be cleaned (`a-b` before `a/b` and ` a-b `, `x.example` before `https://x.example`), and since
att60 F1 that is judged per part, the prefix left out (an exact title in the folder ` W ` still
ranks first), exact folders next: each case is also imported by NEW into an empty vault with
`--json`, and its numbers are checked against that rule (`exact_rule.order_problems`: exact title,
then exact folders, then username, URL, FNV-1a of the value). A case where OLD and NEW differ
counts as expected only when NEW's renaming lines say that a cleaned title met an exact one
("another item's title is exactly …") or exact folders met cleaned ones under equally exact
titles; any other difference is a failure.

Prints each case that differs and keeps its input in WORK/diffs/.
"""
import argparse
import json
import os
import random
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from difftools import base_vaults, mask_now, prepare_work  # noqa: E402
from import_differential import csv_cell  # noqa: E402
import exact_rule  # noqa: E402

FORMATS = {
    "chrome-csv": (["name", "url", "username", "password", "note"], {"title": 0, "url": 1, "user": 2, "pw": 3, "note": 4}),
    "firefox-csv": (["url", "username", "password", "httpRealm", "formActionOrigin", "guid", "timeCreated", "timeLastUsed",
                     "timePasswordChanged"], {"url": 0, "user": 1, "pw": 2}),
    "bitwarden-csv": (["folder", "favorite", "type", "name", "notes", "fields", "reprompt", "login_uri", "login_username",
                       "login_password", "login_totp"], {"title": 3, "url": 7, "user": 8, "pw": 9, "folder": 0, "type": 2, "note": 4}),
    "1password-csv": (["Title", "Url", "Username", "Password", "OTPAuth", "Favorite", "Archived", "Tags", "Notes"],
                      {"title": 0, "url": 1, "user": 2, "pw": 3, "note": 8}),
    "lastpass-csv": (["url", "username", "password", "totp", "extra", "name", "grouping", "fav"],
                     {"url": 0, "user": 1, "pw": 2, "title": 5, "folder": 6, "note": 4}),
    "dashlane-csv": (["username", "username2", "username3", "title", "password", "note", "url", "category", "otpSecret"],
                     {"user": 0, "title": 3, "pw": 4, "url": 6, "note": 5}),
}
TITLES = ["site", "site", "site", "Site", "mail", "mail", "bank", "site (2)", "site (3)", "mail (2)", "x)", "(x)", "a (b)",
          "a/b", "a-b", " a-b ", "caf\u00e9", "cafe\u0301", "", "", "https://x.example", "https://x.example/", "x.example",
          "..", ".", "a\u0007b", "a\u0085b", "a\u202eb", "\u00c5", "A\u030a", "\u212b", "tab\there", "new\nline", "x" * 300]
URLS = ["", "https://x.example", "https://x.example/", "https://site.example/login", "http://y.example", "https://u@x.example/p?q#f",
        "nota url", "https://b\u00fccher.example/", "https://x.example/a\u0301/b", "https://\u202ex.example"]
USERS = ["", "alice", "alice", "bob", "Alice", "carol@example.com", "b\u00f6b", "bo\u0308b", "a\u0001b", "\u202eevil", "z" * 80]
FOLDERS = ["", "", "Work", "Work/Sub", "Home", "a/b", " W "]
SEED_NAMES = ["site", "site (2)", "mail (3)", "bank", "in/site", "in/site (2)", "Work/site", "x.example", "a-b", "caf\u00e9"]


def export_rows(rng):
    """Rows as dicts: a few titles, each with several accounts, some tied, some given twice."""
    rows = []
    size = rng.choice([1, 2, 5, 12, 30, 80, 200, 600, 2500])
    titles = rng.sample(TITLES, rng.randint(1, min(len(TITLES), 6)))
    for _ in range(size):
        if rows and rng.random() < 0.08:
            rows.append(dict(rng.choice(rows)))  # the same account twice
            continue
        rows.append({"title": rng.choice(titles), "url": rng.choice(URLS), "user": rng.choice(USERS) if rng.random() < 0.7 else "u%d" % rng.randrange(40),
                     "pw": rng.choice(["pw", "pw2", "", "x,y", "q\"u", "p%d" % rng.randrange(1000)]), "folder": rng.choice(FOLDERS),
                     "note": rng.choice(["", "", "n", "note %d" % rng.randrange(9)])})
    return rows


def write_csv(rng, fmt, rows):
    header, at = FORMATS[fmt]
    lines = [",".join(header).encode()]
    for r in rows:
        cells = [""] * len(header)
        for key in ("title", "url", "user", "pw", "folder", "note"):
            if key in at:
                cells[at[key]] = r[key]
        if "type" in at:
            cells[at["type"]] = "login"
        if fmt == "firefox-csv":
            cells[6] = cells[8] = "1700000000000"
        lines.append(b",".join(csv_cell(rng, c) for c in cells))
    return b"\n".join(lines) + b"\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--cases", type=int, default=600)
    ap.add_argument("--seed", type=int, default=44)
    ap.add_argument("--work", default="/tmp/repeated-titles-diff")
    ap.add_argument("--sorted", type=float, default=0.5,
                    help="the share of cases whose rows are in title order (an export sorted by site: one read holds each title's rows)")
    a = ap.parse_args()
    pw, old, new = prepare_work(a)
    base = os.path.join(a.work, "base")
    os.makedirs(base)
    seed_doc = json.dumps({"vaultfile_export": 1, "entries": [
        {"name": n, "value": "old-" + n, "fields": {"username": "u"}, "created": 5, "modified": 6} for n in SEED_NAMES]}).encode()
    vaults = base_vaults(old, pw, base, [("empty", [], False), ("full", [], True)], seed_doc)
    rng = random.Random(a.seed)
    stats = {"cases": 0, "diffs": 0, "order_diffs": 0, "imported": 0, "renamed_lines": 0,
             "rule_checked": 0, "rule_problems": 0, "exact_met": 0, "diffs_exact_met": 0}
    formats = list(FORMATS)

    def run(side, kind, doc, opts):
        side.forget_state()
        v, f = "case.vault", "input"
        shutil.copyfile(vaults[kind], os.path.join(side.dir, v))
        open(os.path.join(side.dir, f), "wb").write(doc)
        start = int(time.time() * 1000)
        rc, out, err = side.run(["import", "--format", fmt, "--vault", v, "--password-file", pw] + opts + [f])
        end = int(time.time() * 1000)
        rc2, exp, err2 = side.run(["export", "--format", "json", "--vault", v, "--password-file", pw])
        return rc, out, err, rc2, mask_now(exp, start, end), err2

    for case in range(a.cases):
        fmt = formats[case % len(formats)]
        rows = export_rows(rng)
        if rng.random() < a.sorted:
            # In the order of folder and title (a browser's export, by site), each title's rows in file order.
            at = FORMATS[fmt][1]
            rows.sort(key=lambda row: (row["folder"].encode() if "folder" in at else b"", row["title" if "title" in at else "url"].encode()))
        doc = write_csv(rng, fmt, rows)
        kind = rng.choice(["empty", "empty", "full"])
        opts = []
        if rng.random() < 0.3:
            opts += ["--prefix", rng.choice(["in", "a/b", "caf\u00e9"])]
        r = rng.random()
        if r < 0.25:
            opts.append("--overwrite")
        elif r < 0.5:
            opts.append("--skip-existing")
        if rng.random() < 0.25:
            opts.append("--dry-run")
        if rng.random() < 0.3:
            opts.append("--json")
        results = [run(side, kind, doc, opts) for side in (old, new)]
        # The rule, on NEW's own import of the case into an empty vault.
        prefix_opts = opts[opts.index("--prefix"):opts.index("--prefix") + 2] if "--prefix" in opts else []
        checked = exact_rule.check(new, pw, vaults["empty"], fmt, doc, prefix_opts)
        met = checked is not None and checked[1]
        if checked is not None:
            stats["rule_checked"] += 1
            stats["exact_met"] += met
            if checked[0]:
                stats["rule_problems"] += 1
                path = os.path.join(a.work, "diffs", "rule%05d.%s" % (case, fmt))
                open(path, "wb").write(doc)
                print("RULE case %d fmt %s opts %s: %s -> %s" % (case, fmt, prefix_opts, checked[0][:3], path), flush=True)
        stats["cases"] += 1
        stats["imported"] += results[0][0] == 0
        stats["renamed_lines"] += results[0][2].count(b"renamed '") + results[0][2].count(b"named an item")
        results = [exact_rule.without_new_warnings(r) for r in results]
        if results[0] != results[1] and met:
            # Expected: a cleaned title met an exact one, or exact folders cleaned ones (att58 F1,
            # att60 F1), and the rule held above.
            stats["diffs_exact_met"] += 1
        elif results[0] != results[1]:
            stats["diffs"] += 1
            path = os.path.join(a.work, "diffs", "case%05d.%s" % (case, fmt))
            open(path, "wb").write(doc)
            labels = ["status", "stdout", "stderr", "export status", "export", "export stderr"]
            print("DIFF case %d fmt %s vault %s opts %s: %s -> %s" % (case, fmt, kind, opts,
                  [labels[i] for i in range(6) if results[0][i] != results[1][i]], path), flush=True)
            for i in range(6):
                if results[0][i] != results[1][i]:
                    print("   old %s: %r" % (labels[i], results[0][i][:500] if isinstance(results[0][i], bytes) else results[0][i]))
                    print("   new %s: %r" % (labels[i], results[1][i][:500] if isinstance(results[1][i], bytes) else results[1][i]))
        # Another row order: the same names for the same accounts (the export alike), when no two
        # rows tie on username, URL and password but differ otherwise (ties keep the file's order:
        # `café` and `café`, or `a/b` and `a-b`, with one account, may swap).
        keys = {}
        for row in rows:
            keys.setdefault((row["user"], row["url"], row["pw"]), set()).add((row["title"], row["folder"], row["note"]))
        if "--dry-run" not in opts and results[1][0] == 0 and all(len(n) == 1 for n in keys.values()):
            shuffled = rows[:]
            rng.shuffle(shuffled)
            again = run(new, kind, write_csv(rng, fmt, shuffled), opts)
            if again[0] != results[1][0] or again[4] != results[1][4]:
                stats["order_diffs"] += 1
                path = os.path.join(a.work, "diffs", "order%05d.%s" % (case, fmt))
                open(path, "wb").write(doc)
                print("ORDER case %d fmt %s vault %s opts %s: another row order gave other names -> %s" % (case, fmt, kind, opts, path), flush=True)
        if case % 100 == 0:
            print("... %d cases, %d diffs, %d order diffs, %d rule problems" % (stats["cases"], stats["diffs"], stats["order_diffs"],
                                                                              stats["rule_problems"]), flush=True)
    print("done", stats)
    sys.exit(1 if stats["diffs"] or stats["order_diffs"] or stats["rule_problems"] else 0)


if __name__ == "__main__":
    main()
