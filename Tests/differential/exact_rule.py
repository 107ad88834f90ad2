"""The numbering rule of other managers' imports (docs/INTERCHANGE.md, "Numbering"; att58 F1), as a
model checked against what a binary did: imported into an empty vault with `--json`, the renamings
(`renamed[]`) and the vault's export say, for each entry, its name before numbering, its number,
whether its name is exactly the source's (not renamed, or renamed only by numbering), and its
username, first URL and value. Among the entries of one name before numbering, the numbers must
follow the order: exact first, then username, then first URL (their bytes), then FNV-1a of the
value (ties of all four may come in file order). The cleaning itself is the binary's; the
differentials compare it with main's in every case where no cleaned title meets an exact one.

Used by repeated_titles_differential.py and import_differential.py.
"""
import base64
import json
import os
import re
import shutil

# The renaming line of an item that an exact title pushed aside (Import+Plan.swift, renamingLine).
YIELD_LINE = b"another item's title is exactly '"
NUMBERED = re.compile(r"^(.*) \((\d+)\)$", re.S)


def fnv1a(data):
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def _bytes(entry, key):
    """The bytes of `entry`'s value (key None) or field `key`; b"" when it has none."""
    if key is None:
        if "value" in entry:
            return entry["value"].encode("utf-8", "surrogatepass")
        return base64.b64decode(entry.get("value_base64", ""))
    if key in entry.get("fields", {}):
        return entry["fields"][key].encode("utf-8", "surrogatepass")
    if key in entry.get("fields_base64", {}):
        return base64.b64decode(entry["fields_base64"][key])
    return b""


def order_problems(report, export):
    """What breaks the rule in one import (`report`: its `--json` object; `export`: the vault's
    `export --format json` after it, into an empty vault): a list of texts, empty when it holds."""
    renamed = {r["to"]: r for r in report.get("renamed", [])}
    groups = {}
    for entry in export["entries"]:
        name = entry["name"]
        r = renamed.get(name)
        reasons = r["reasons"] if r else []
        numbered = r is not None and "numbered" in reasons
        # Exact: not renamed, or renamed by numbering alone (which keeps the title in `title`).
        exact = r is None or (reasons in (["numbered"], ["numbered", "title_kept"]) and "named_after" not in r)
        base, number = name, 1
        if numbered:
            m = NUMBERED.match(name)
            if not m:
                return ["%r is numbered but has no ' (n)'" % name]
            base, number = m.group(1), int(m.group(2))
        key = (not exact, _bytes(entry, "username"), _bytes(entry, "url"), fnv1a(_bytes(entry, None)))
        groups.setdefault(base, []).append((number, key, name))
    problems = []
    for base, members in groups.items():
        if len(members) < 2:
            continue
        members.sort()
        if members[0][0] != 1:
            problems.append("%r: no entry keeps the name" % base)
        for (_, a, na), (_, b, nb) in zip(members, members[1:]):
            if a > b:
                problems.append("%r (%s) comes before %r (%s)" % (na, "exact" if not a[0] else "cleaned", nb, "exact" if not b[0] else "cleaned"))
    return problems


def check(side, pw, empty_vault, fmt, doc, prefix_opts):
    """Imports `doc` with `side` into a copy of `empty_vault` with `--json` (and `prefix_opts`),
    and checks the rule: None when the import fails (nothing to check), else (problems, whether
    some cleaned title met an exact one: a renaming line says which exact title kept the name)."""
    side.forget_state()
    shutil.copyfile(empty_vault, os.path.join(side.dir, "check.vault"))
    open(os.path.join(side.dir, "check-input"), "wb").write(doc)
    rc, out, err = side.run(["import", "--format", fmt, "--vault", "check.vault", "--password-file", pw, "--json"] + prefix_opts + ["check-input"])
    if rc != 0:
        return None
    rc2, exported, err2 = side.run(["export", "--format", "json", "--vault", "check.vault", "--password-file", pw])
    if rc2 != 0:
        return (["export failed: %r" % err2[:200]], YIELD_LINE in err)
    return (order_problems(json.loads(out), json.loads(exported)), YIELD_LINE in err)
