"""The numbering rule of other managers' imports (docs/INTERCHANGE.md, "Numbering"; att58 F1,
att60 F1), as a model checked against what a binary did: imported into an empty vault with
`--json`, the renamings (`renamed[]`) and the vault's export say, for each entry, its name before
numbering, its number, its title and folders as the source held them, and its username, first URL
and value. Exactness is judged per part, the prefix left out: the title is exact when the name's
last part is the title as the source held it; the folders are exact when the name's folders are
the source's. Among the entries of one name before numbering, the numbers must follow the order:
exact title first, then (among equal titles) exact folders, then username, then first URL (their
bytes), then FNV-1a of the value (ties of all may come in file order). The cleaning itself is the
binary's; the differentials compare it with the base's in every case where no cleaned title meets
an exact one and no exact folder meets a cleaned one.

Used by repeated_titles_differential.py and import_differential.py.
"""
import base64
import json
import os
import re
import shutil
import unicodedata

# The renaming line of an item that an exact title pushed aside (Import+Plan.swift, renamingLine).
YIELD_LINE = b"another item's title is exactly '"
NUMBERED = re.compile(r"^(.*) \((\d+)\)$", re.S)


# The warning an `--overwrite` gives since att62 F7 when a replaced entry held another account:
# a line the base never printed, left out of both sides' stderr and `--json` warnings.
REPLACED_OTHER_LINE = re.compile(rb"^vaultfile: warning: '.*' held another account \(.*--overwrite replaces by name, not by account.*\n", re.M)


def without_new_warnings(result):
    """`result` (status, stdout, stderr, …) without the `replaced_other_account` warning (att62 F7);
    a `--json` object is written again in one form (keys sorted), on both sides alike."""
    rc, out, err = result[0], result[1], result[2]
    err = REPLACED_OTHER_LINE.sub(b"", err)
    if out.lstrip().startswith(b"{") and b'"warnings"' in out:
        try:
            doc = json.loads(out)
            doc["warnings"] = [w for w in doc.get("warnings", []) if w.get("kind") != "replaced_other_account"]
            out = json.dumps(doc, sort_keys=True).encode()
        except (ValueError, AttributeError):
            pass
    return (rc, out, err) + tuple(result[3:])


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


def prefix_parts(prefix_opts):
    """The folders of `--prefix` as the CLI makes them (Import.prefixFolders): trailing '/' dropped, split on '/'."""
    if not prefix_opts:
        return []
    folder = prefix_opts[1].rstrip("/")
    return [p for p in folder.split("/") if p]


def _cleans_to_nothing(part):
    """Whether cleaning leaves `part` empty (spaces, tabs, controls and format characters only): dropped from a name."""
    return all(c in " \t" or ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or unicodedata.category(c) == "Cf" for c in part)


def rank(r, entry, base, prefix):
    """Which parts of an entry's name are the source's (two bits, the title's the more significant:
    3 whole, 2 title, 1 folders, 0 neither): `r` its renaming (None: not renamed, so whole), `base`
    its name before numbering, `prefix` the `--prefix` folders (never judged)."""
    if r is None:
        return 3
    derived = "named_after" in r
    source = r["from"].encode("utf-8", "surrogatepass")
    base_bytes = base.encode("utf-8", "surrogatepass")
    last = base_bytes.rsplit(b"/", 1)[-1]
    # The title as the source held it: the field `title` (a numbered or renamed title keeps it),
    # else the renaming's last part (a title the name keeps holds no '/'); none when the name was made.
    if derived:
        title = b""
    elif "title" in entry.get("fields", {}) or "title" in entry.get("fields_base64", {}):
        title = _bytes(entry, "title")
    else:
        title = source.rsplit(b"/", 1)[-1]
    title_exact = not derived and title == last
    # The folders: the renaming's text between the prefix and the title, against the name's
    # between its (cleaned) prefix and its last part.
    head = "/".join(prefix).encode("utf-8", "surrogatepass")
    rest = source[len(head) + 1:] if prefix else source
    if not rest.endswith(title):
        return None  # the renaming is not prefix + folders + title: the model cannot say
    raw = rest[:len(rest) - len(title)]
    kept = len([p for p in prefix if not _cleans_to_nothing(p)])
    parts = base_bytes.split(b"/")
    middle = b"/".join(parts[kept:-1])
    folders_exact = raw == b"" and middle == b"" or middle != b"" and raw == middle + b"/"
    return (2 if title_exact else 0) | (1 if folders_exact else 0)


def order_problems(report, export, prefix=()):
    """What breaks the rule in one import (`report`: its `--json` object; `export`: the vault's
    `export --format json` after it, into an empty vault; `prefix`: the `--prefix` folders):
    (a list of texts, empty when it holds; whether exact folders decided between two items of one
    name whose titles were equally exact)."""
    renamed = {r["to"]: r for r in report.get("renamed", [])}
    groups = {}
    for entry in export["entries"]:
        name = entry["name"]
        r = renamed.get(name)
        reasons = r["reasons"] if r else []
        numbered = r is not None and "numbered" in reasons
        base, number = name, 1
        if numbered:
            m = NUMBERED.match(name)
            if not m:
                return ["%r is numbered but has no ' (n)'" % name], False
            base, number = m.group(1), int(m.group(2))
        exact = rank(r, entry, base, list(prefix))
        if exact is None:
            return ["%r: renamed from %r, not the prefix, folders and title" % (name, r["from"])], False
        key = (-exact, _bytes(entry, "username"), _bytes(entry, "url"), fnv1a(_bytes(entry, None)))
        groups.setdefault(base, []).append((number, key, name))
    problems = []
    folders_decided = False
    words = {3: "exact", 2: "exact title", 1: "exact folders", 0: "cleaned"}
    for base, members in groups.items():
        if len(members) < 2:
            continue
        members.sort()
        if members[0][0] != 1:
            problems.append("%r: no entry keeps the name" % base)
        ranks = {-m[1][0] for m in members}
        folders_decided |= any(t in ranks and t | 1 in ranks for t in (0, 2))
        for (_, a, na), (_, b, nb) in zip(members, members[1:]):
            if a > b:
                problems.append("%r (%s) comes before %r (%s)" % (na, words[-a[0]], nb, words[-b[0]]))
    return problems, folders_decided


def check(side, pw, empty_vault, fmt, doc, prefix_opts):
    """Imports `doc` with `side` into a copy of `empty_vault` with `--json` (and `prefix_opts`),
    and checks the rule: None when the import fails (nothing to check), else (problems, whether
    the per-part rule decided something: a cleaned title met an exact one — a renaming line says
    which exact title kept the name — or exact folders met cleaned ones under equal titles)."""
    side.forget_state()
    shutil.copyfile(empty_vault, os.path.join(side.dir, "check.vault"))
    open(os.path.join(side.dir, "check-input"), "wb").write(doc)
    rc, out, err = side.run(["import", "--format", fmt, "--vault", "check.vault", "--password-file", pw, "--json"] + prefix_opts + ["check-input"])
    if rc != 0:
        return None
    rc2, exported, err2 = side.run(["export", "--format", "json", "--vault", "check.vault", "--password-file", pw])
    if rc2 != 0:
        return (["export failed: %r" % err2[:200]], YIELD_LINE in err)
    problems, folders_decided = order_problems(json.loads(out), json.loads(exported), prefix_parts(prefix_opts))
    return (problems, YIELD_LINE in err or folders_decided)
