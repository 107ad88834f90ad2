#!/usr/bin/env python3
"""Differential fuzzer of `vaultfile import` between two binaries (adversarial review, session 6).

    Tests/differential/import_differential.py OLD_BINARY NEW_BINARY [--cases N] [--seed S] [--work DIR]

Generates vaultfile JSON, KeePassXC CSV, Bitwarden JSON and KeePass XML (`--formats keepass-xml`) documents, and the other
managers' CSV exports (`--formats chrome-csv,firefox-csv,…`: titles that repeat, ten-odd accounts to a few sites) (valid,
edge-case, mutated and truncated), imports each with both binaries into copies of the same vault (empty, holding entries,
keeping history; with and without --overwrite and --json) and compares the exit status, stdout,
stderr and the vault afterwards (`export --format json`, times of "now" masked). Prints each case
that differs and keeps its input in WORK/diffs/.

Since att58 F1 an item whose title is exactly the source's ranks before every item whose title had
to be cleaned, and since att60 F1 that is judged per part (the prefix left out), exact folders
next: each case of another manager's format is also imported by NEW into an empty vault with
`--json` and its numbers checked against that rule (`exact_rule.order_problems`). A case where OLD
and NEW differ counts as expected only when NEW's renaming lines say that a cleaned title met an
exact one, or exact folders met cleaned ones under equally exact titles; the summary gives both counts.
"""
import json, os, random, re, shutil, sys, time, argparse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from difftools import base_vaults, mask_now, prepare_work  # noqa: E402

# MARK: - name, value and field pools

NAMES = ["a", "b", "db01", "db01", "api/key", "api/token", "Email/Work/x", "z", "A", "_", "x y", "ab", "abc",
         "LD_PRELOAD", "ld_preload", "PATH", "path", "1abc", "DYLD_INSERT", "BASH_FUNC_x%%", "PYTHONPATH", "NODE_OPTIONS",
         "ld-preload", "l", "LD", "IFS", "ps4", "PS4", "GIT_SSH_COMMAND", "git-ssh-command", "9", "99", "-x", ".x",
         "..", ".", "a/..", "a/./b", "/a", "a/", "a//b", " a", "a ", "\ta", "a\u0001", "a\u007f", "a\u0085",
         "caf\u00e9", "cafe\u0301", "\u00c5", "A\u030a", "\u212b", "\ufb01", "\u200b", "a\u200db", "\U0001F600",
         "x" * 1024, "y" * 1025, "q/" * 300, "a (2)", "a (3)", "untitled", "untitled (2)", "db01 (2)", "c:\\x", "a\"b",
         "a\\b", "a\u2028b", "\u0000", "a\u0000b", "AA", "aa", "Aa", "aA", "x.y", "x-y", "x_y"]
FIELD_KEYS = ["username", "url", "notes", "totp", "a", "B", "a.b", "a-b", "_", "x" * 64, "y" * 65, "", "a b", "a/b",
              "\u00e9", "e\u0301", "k\u0000", "1", "-", ".", "..", "Username", "USERNAME"]
VALUES = ["", "v", "pass word", "a\nb", "\"quoted\"", "back\\slash", "/slash", "\u00e9", "e\u0301", "\U0001F600",
          "\u0000", "\u0001\u001f", "\u007f", "\u2028", "x" * 300, "tab\there", "\r\n", "=", ",", "a,b", "'"]
TIMES = [None, 0, 1, -1, 1700000000000, 253402300799999, 253402300800000, -62135596800000, 2 ** 53, 2 ** 63 - 1,
         -2 ** 63, 2 ** 63, 1.5, "1700000000000", 1e3, 10 ** 30]
ISO = [None, "2024-01-02T03:04:05.678Z", "2024-01-02T03:04:05Z", "1970-01-01T00:00:00.000Z", "2024-02-30T00:00:00Z",
       "not a time", "", "9999-12-31T23:59:59.999Z", "0001-01-01T00:00:00Z", "2024-01-02 03:04:05",
       "2024-01-02T03:04:05.678+02:00", "2024-01-02T03:04:05.6789Z"]


def pick(rng, pool):
    return rng.choice(pool)


def rand_text(rng, n=12):
    alphabet = "abcXYZ019 _-./\\\"'\n\t\u00e9\u0301\u4e2d\U0001F600\u0000\u0007,=#" + ("" if CLEAN[0] else "\ud800")
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, n)))


CLEAN = [False]
CLEAN_NAMES = ["a", "b", "db01", "api/key", "api/token", "Email/Work/x", "z", "A", "_", "x y", "ab", "abc", "LD_PRELOAD",
               "ld_preload", "PATH", "path", "1abc", "DYLD_INSERT", "PYTHONPATH", "NODE_OPTIONS", "ld-preload", "IFS", "PS4",
               "9", "99", "-x", ".x", "x" * 1024, "a (2)", "db01 (2)", "untitled", "AA", "aa", "x.y", "x-y", "x_y", "a\"b",
               "a\\b", "~", "a:b", "a!b", "e0001", "e0002", "e0003", "zz/top"]
CLEAN_KEYS = ["username", "url", "notes", "totp", "a", "B", "a.b", "a-b", "_", "x" * 64, "1", "-", ".", "..", "Username", "USERNAME"]


def rand_name(rng):
    if CLEAN[0]:
        return pick(rng, CLEAN_NAMES) if rng.random() < 0.6 else "e%04d" % rng.randint(0, 60)
    r = rng.random()
    if r < 0.55:
        return pick(rng, NAMES)
    if r < 0.85:
        return "e%04d" % rng.randint(0, 40)
    return rand_text(rng, 10)


def rand_value(rng):
    r = rng.random()
    if CLEAN[0] and r < 0.6:
        return pick(rng, [v for v in VALUES if "\u0000" not in v])
    if r < 0.6:
        return pick(rng, VALUES)
    if r < 0.97:
        return rand_text(rng, 30)
    return "v" * rng.choice([65536, 300000])


# MARK: - JSON writing with its own escapes (lone surrogates, raw control bytes, escaped ASCII)

def js(rng, s, style=None):
    """A JSON string literal of s, escaped in one of several ways; returns bytes."""
    style = style if style is not None else rng.random()
    out = bytearray(b'"')
    for ch in s:
        c = ord(ch)
        if 0xD800 <= c <= 0xDFFF:
            out += b"\\u%04x" % c
        elif ch == '"':
            out += b'\\"'
        elif ch == "\\":
            out += b"\\\\"
        elif c < 0x20:
            if style < 0.03:
                out.append(c)  # raw control byte: invalid JSON
            elif ch == "\n" and style < 0.5:
                out += b"\\n"
            else:
                out += b"\\u%04X" % c if style < 0.3 else b"\\u%04x" % c
        elif c >= 0x80 and style < 0.25:
            if c > 0xFFFF:
                c -= 0x10000
                out += b"\\u%04x\\u%04x" % (0xD800 + (c >> 10), 0xDC00 + (c & 0x3FF))
            else:
                out += b"\\u%04x" % c
        elif ch == "/" and style < 0.1:
            out += b"\\/"
        elif style < 0.05 and ch.isalpha() and c < 0x80:
            out += b"\\u%04x" % c
        else:
            out += ch.encode("utf-8", "surrogatepass")
    out += b'"'
    return bytes(out)


def jnum(rng, v):
    if isinstance(v, float):
        return repr(v).encode()
    if isinstance(v, str):
        return js(rng, v, 1.0)
    return str(v).encode()


def ws(rng):
    return rng.choice([b"", b"", b" ", b"\n  ", b"\t", b"\r\n"])


def jobject(rng, members):
    """members: list of (key bytes, value bytes)."""
    parts = [ws(rng) + k + ws(rng) + b":" + ws(rng) + v + ws(rng) for k, v in members]
    return b"{" + b",".join(parts) + ws(rng) + b"}"


def native_json(rng):
    n = rng.choice([0, 1, 2, 3, 5, 8, 20, 60])
    sortedNames = rng.random() < 0.5
    names = [rand_name(rng) for _ in range(n)]
    if sortedNames:
        names = sorted(set(names), key=lambda s: s.encode("utf-8", "surrogatepass"))
    items = []
    for name in names:
        members = []
        if CLEAN[0] or rng.random() > 0.02:
            members.append((js(rng, "name", 0.9 if rng.random() > 0.03 else 0.01), js(rng, name)))
        r = rng.random() * (0.9 if CLEAN[0] else 1.0)
        if r < 0.9:
            members.append((b'"value"', js(rng, rand_value(rng))))
        elif r < 0.95:
            members.append((b'"value_base64"', js(rng, rng.choice(["dg==", "", "!!", "dmFsdWU="]), 1.0)))
        elif r < 0.97:
            members.append((b'"value"', b"null"))
        if rng.random() < 0.6:
            fields = []
            for _ in range(rng.choice([0, 1, 2, 3, 4, 64, 65] if not CLEAN[0] else [0, 1, 2, 3, 4, 5, 63])):
                key = pick(rng, CLEAN_KEYS if CLEAN[0] else FIELD_KEYS) if rng.random() < 0.5 else "f%02d" % rng.randint(0, 70)
                fields.append((js(rng, key, 0.9 if rng.random() > 0.05 else 0.01), js(rng, rand_value(rng))))
            if CLEAN[0]:
                seen = set()
                fields = [f for f in fields if not (f[0] in seen or seen.add(f[0]))]
            members.append((b'"fields"', jobject(rng, fields)))
        if not CLEAN[0] and rng.random() < 0.03:
            members.append((b'"fields_base64"', jobject(rng, [(b'"k"', b'"dg=="')])))
        for key in ("created", "modified"):
            if rng.random() < 0.7:
                t = pick(rng, TIMES if not CLEAN[0] else [None, 0, 1, -1, 1700000000000, 2 ** 63 - 1, -2 ** 63, 253402300800000])
                if t is not None:
                    members.append((js(rng, key, 1.0), jnum(rng, t)))
        if not CLEAN[0] and rng.random() < 0.03:
            members.append((b'"extra"', b"1"))
        if not CLEAN[0] and rng.random() < 0.03 and members:
            members.append(rng.choice(members))  # a repeated key
        rng.shuffle(members) if rng.random() < 0.3 else None
        items.append(jobject(rng, members))
    version = b"1" if CLEAN[0] else rng.choice([b"1"] * 12 + [b"2", b"1.0", b'"1"', b"0", b"-1", b"01"])
    doc = [(b'"vaultfile_export"', version), (b'"entries"', b"[" + b",".join(ws(rng) + i for i in items) + ws(rng) + b"]")]
    if rng.random() < 0.3:
        doc.reverse()
    if rng.random() < 0.02:
        doc.append((b'"entries"', b"[]"))
    return ws(rng) + jobject(rng, doc) + ws(rng)


def csv_cell(rng, s):
    b = s.encode("utf-8", "surrogatepass")
    if rng.random() < 0.7 or any(c in s for c in ',"\n\r'):
        return b'"' + b.replace(b'"', b'""') + b'"'
    return b


def keepassxc_csv(rng):
    header = ["Group", "Title", "Username", "Password", "URL", "Notes", "TOTP", "Icon", "Last Modified", "Created"]
    if rng.random() < 0.2:
        header = rng.sample(header, rng.randint(2, len(header)))
        for must in ("Title", "Password"):
            if must not in header and rng.random() < 0.9:
                header.append(must)
    if rng.random() < 0.05:
        header.append(rng.choice(["Notes", "title", "URL"]))
    if rng.random() < 0.1:
        header = [h.lower() if rng.random() < 0.5 else h.upper() for h in header]
    rows = [header]
    n = rng.choice([0, 1, 2, 3, 5, 10, 30])
    titles = [rand_name(rng) for _ in range(n)]
    if rng.random() < 0.5:
        titles.sort(key=lambda s: s.encode("utf-8", "surrogatepass"))
    groups = ["", "Root", "Root/Email", "Passwords", "Passwords/Work", "Email/Work", "Root/", "/", "a//b", "Root/caf\u00e9", "..", "Root/.."]
    for title in titles:
        row = []
        for h in header:
            k = h.lower()
            if k == "group":
                row.append(pick(rng, groups) if rng.random() < 0.4 else "Root")
            elif k == "title":
                row.append(title if rng.random() > 0.05 else "")
            elif k in ("last modified", "created"):
                row.append(pick(rng, ISO) or "")
            elif k == "icon":
                row.append("0")
            else:
                row.append(rand_value(rng) if rng.random() < 0.7 else "")
        if rng.random() < 0.02:
            row.append("extra")
        rows.append(row)
    eol = rng.choice([b"\n", b"\r\n"])
    out = eol.join(b",".join(csv_cell(rng, c) for c in row) for row in rows)
    if rng.random() < 0.7:
        out += eol
    if rng.random() < 0.05:
        out = b"\xef\xbb\xbf" + out
    return out


def bitwarden_json(rng):
    folders = [("f1", "Work"), ("f2", "Work/Sub"), ("f3", "caf\u00e9"), ("f4", ".."), ("f5", "a/"), ("f6", "")]
    if rng.random() < 0.1:
        folders.append(("f1", "Dup"))
    n = rng.choice([0, 1, 2, 3, 5, 10, 30])
    titles = [rand_name(rng) for _ in range(n)]
    if rng.random() < 0.5:
        titles.sort(key=lambda s: s.encode("utf-8", "surrogatepass"))
    items = []
    for title in titles:
        t = rng.choice([1, 1, 1, 2, 2, 3, 4])
        m = [(b'"id"', js(rng, "id%d" % rng.randint(0, 9999), 1.0)), (b'"type"', str(t).encode())]
        r = rng.random()
        if r < 0.9:
            m.append((b'"name"', js(rng, title)))
        elif r < 0.95:
            m.append((b'"name"', b"null"))
        if rng.random() < 0.3:
            m.append((b'"folderId"', js(rng, rng.choice(["f1", "f2", "f3", "f4", "f5", "f6", "nope"]), 1.0) if rng.random() < 0.9 else b"null"))
        if rng.random() < 0.6:
            m.append((b'"notes"', js(rng, rand_value(rng)) if rng.random() < 0.9 else b"null"))
        if rng.random() < 0.5:
            m.append((b'"revisionDate"', js(rng, pick(rng, ISO) or "2024-01-01T00:00:00.000Z", 1.0)))
        if rng.random() < 0.5:
            m.append((b'"creationDate"', js(rng, pick(rng, ISO) or "2023-01-01T00:00:00.000Z", 1.0) if rng.random() < 0.9 else b"null"))
        if t == 1 and rng.random() < 0.9:
            login = []
            for k in ("username", "password", "totp"):
                if rng.random() < 0.7:
                    login.append((js(rng, k, 1.0), js(rng, rand_value(rng)) if rng.random() < 0.9 else b"null"))
            if rng.random() < 0.6:
                uris = [jobject(rng, [(b'"match"', b"null"), (b'"uri"', js(rng, rand_value(rng)))]) for _ in range(rng.randint(0, 3))]
                login.append((b'"uris"', b"[" + b",".join(uris) + b"]"))
            m.append((b'"login"', jobject(rng, login)))
        if t == 2:
            m.append((b'"secureNote"', b'{"type":0}'))
        if rng.random() < 0.4:
            fs = []
            for _ in range(rng.choice([0, 1, 2, 3, 64, 66])):
                label = pick(rng, CLEAN_KEYS if CLEAN[0] else FIELD_KEYS) if rng.random() < 0.7 else rand_text(rng, 8)
                fm = [(b'"name"', js(rng, label) if rng.random() < 0.95 else b"null"), (b'"type"', b"0")]
                if rng.random() < 0.95:
                    fm.append((b'"value"', js(rng, rand_value(rng)) if rng.random() < 0.9 else b"null"))
                fs.append(jobject(rng, fm))
            m.append((b'"fields"', b"[" + b",".join(fs) + b"]"))
        if rng.random() < 0.05:
            m.append((b'"favorite"', b"false"))
        if rng.random() < 0.02 and m:
            m.append(rng.choice(m))
        if rng.random() < 0.3:
            rng.shuffle(m)
        items.append(jobject(rng, m))
    doc = [(b'"encrypted"', b"false"),
           (b'"folders"', b"[" + b",".join(jobject(rng, [(b'"id"', js(rng, i, 1.0)), (b'"name"', js(rng, nm))]) for i, nm in folders) + b"]"),
           (b'"items"', b"[" + b",".join(items) + b"]")]
    if rng.random() < 0.2:
        rng.shuffle(doc)
    if rng.random() < 0.03:
        doc[0] = (b'"encrypted"', b"true")
    return ws(rng) + jobject(rng, doc) + ws(rng)


# The other managers' CSV exports: each header, and where a row's title, URL, username and password go.
FOREIGN_CSV = {
    "chrome-csv": (["name", "url", "username", "password", "note"], {"title": 0, "url": 1, "user": 2, "pw": 3}),
    "firefox-csv": (["url", "username", "password", "httpRealm", "formActionOrigin", "guid", "timeCreated", "timeLastUsed",
                     "timePasswordChanged"], {"url": 0, "user": 1, "pw": 2}),
    "bitwarden-csv": (["folder", "favorite", "type", "name", "notes", "fields", "reprompt", "login_uri", "login_username",
                       "login_password", "login_totp"], {"title": 3, "url": 7, "user": 8, "pw": 9, "folder": 0, "type": 2}),
    "1password-csv": (["Title", "Url", "Username", "Password", "OTPAuth", "Favorite", "Archived", "Tags", "Notes"],
                      {"title": 0, "url": 1, "user": 2, "pw": 3}),
    "lastpass-csv": (["url", "username", "password", "totp", "extra", "name", "grouping", "fav"],
                     {"url": 0, "user": 1, "pw": 2, "title": 5, "folder": 6}),
    "dashlane-csv": (["username", "username2", "username3", "title", "password", "note", "url", "category", "otpSecret"],
                     {"user": 0, "title": 3, "pw": 4, "url": 6}),
}
REPEATED_TITLES = ["site", "site", "site", "Site", "site (2)", "site (3)", "mail", "mail", "a/b", "a-b", "", "",
                   "https://x.example", "x.example", " site ", "..", "caf\u00e9", "cafe\u0301", "x" * 1030]
SITE_URLS = ["", "https://x.example", "https://x.example/", "https://site.example/login", "http://y.example", "nota url"]
USERS = ["", "", "alice", "bob", "Alice", "carol@example.com", "b\u00f6b", "alice"]


def foreign_csv(fmt):
    """A random export of `fmt` whose titles (or, for Firefox, sites) mostly repeat."""
    def generate(rng):
        header, at = FOREIGN_CSV[fmt]
        rows = []
        for _ in range(rng.randint(0, 14)):
            row = [""] * len(header)
            if "title" in at:
                row[at["title"]] = pick(rng, REPEATED_TITLES[:10] if CLEAN[0] else REPEATED_TITLES)
            row[at["url"]] = pick(rng, SITE_URLS)
            row[at["user"]] = pick(rng, USERS[:6] if CLEAN[0] else USERS)
            row[at["pw"]] = pick(rng, ["pw", "pw2", "", "x,y", "q\"u"])
            if "folder" in at and rng.random() < 0.3:
                row[at["folder"]] = pick(rng, ["Work", "Work/Sub", "Home"])
            if "type" in at:
                row[at["type"]] = "login"
            if fmt == "firefox-csv":
                row[6] = row[8] = "1700000000000"
            if not CLEAN[0] and rng.random() < 0.05:
                row = row[:-1]  # ragged
            rows.append(row)
        return b"\n".join([",".join(header).encode()] + [b",".join(csv_cell(rng, c) for c in r) for r in rows]) + b"\n"
    return generate


def xml_text(s):
    """`s` escaped, without the characters XML refuses (a mutated document still has some)."""
    s = "".join(c for c in s if c in "\t\n\r" or (0x20 <= ord(c) < 0xD800) or (0xE000 <= ord(c) < 0xFFFE) or ord(c) > 0xFFFF)
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def keepass_xml(rng):
    """KeePass 2 XML: Meta (a pool, a recycle bin, sometimes after Root or absent), groups nested up
    to three deep holding entries whose titles repeat or clean alike, custom strings, URLs, TOTP
    attributes, tags, times, attachments by reference (some to nothing) or inline, and history."""
    import base64
    b64 = lambda t: base64.b64encode(t.encode()).decode()
    serial = [0]
    keys = ["PIN", "username", "KP2A_URL", "KP2A_URL_1", "otp", "TOTP Seed", "TOTP Settings", "a label!", "url", "Notes"]
    times = ["2023-11-14T22:13:20Z", "2020-01-01T00:00:00Z", "not a time", "AAAAAAAAAAA="]

    def string(k, v):
        return "<String><Key>%s</Key><Value>%s</Value></String>" % (xml_text(k), xml_text(v))

    def entry(history):
        serial[0] += 1
        title = rand_name(rng) if rng.random() < 0.5 else "entry %d" % serial[0]
        x = "<Entry><UUID>%s</UUID>" % b64("u%d" % serial[0]) + string("Title", title) + string("Password", rand_value(rng))
        if rng.random() < 0.5: x += string("UserName", rng.choice(["", "alice", "bob", rand_value(rng)]))
        if rng.random() < 0.4: x += string("URL", rng.choice(["https://x.example/a/", "", "y.example"]))
        if rng.random() < 0.3: x += string("Notes", rand_value(rng))
        for _ in range(rng.randrange(3)):
            x += string(rng.choice(keys), rng.choice(["", "x", "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP", "JBSWY3DPEHPK3PXP", "30;6"]))
        if rng.random() < 0.2: x += "<Tags>%s</Tags>" % rng.choice(["a;b", " t ", ""])
        if rng.random() < 0.5:
            x += "<Times><CreationTime>%s</CreationTime><LastModificationTime>%s</LastModificationTime>%s</Times>" % (
                rng.choice(times[:2]) if rng.random() < 0.97 else rng.choice(times), rng.choice(times[:2]),
                "<ExpiryTime>2030-01-01T00:00:00Z</ExpiryTime><Expires>True</Expires>" if rng.random() < 0.2 else "")
        for i in range(rng.randrange(3) if rng.random() < 0.25 else 0):
            value = "<Value>%s</Value>" % b64("inline") if rng.random() < 0.3 else '<Value Ref="%d"/>' % rng.randrange(3)
            x += "<Binary><Key>file%d.txt</Key>%s</Binary>" % (i, value)
        if history and rng.random() < 0.3:
            x += "<History>" + "".join(entry(False) for _ in range(1 + rng.randrange(2))) + "</History>"
        return x + "</Entry>"

    def group(depth):
        serial[0] += 1
        name = "Root" if depth == 0 else rng.choice(["Work", "Home", "Recycle Bin", "a/b", "\u00dcn", "", rand_name(rng)])
        x = "<Group><UUID>%s</UUID><Name>%s</Name>" % (b64("g%d" % serial[0]), xml_text(name))
        if rng.random() < 0.2: x += "<Notes>n</Notes>"
        x += "".join(entry(True) for _ in range(rng.randrange(5)))
        if depth < 3:
            x += "".join(group(depth + 1) for _ in range(rng.randrange(4 if depth == 0 else 2)))
        return x + "</Group>"

    meta = "<Meta><Generator>fuzz</Generator>"
    if rng.random() < 0.5:
        meta += '<Binaries><Binary ID="0">%s</Binary><Binary ID="1"></Binary></Binaries>' % b64("zero")
    if rng.random() < 0.2: meta += "<RecycleBinEnabled>False</RecycleBinEnabled>"
    meta += "</Meta>"
    root = "<Root>" + group(0) + "</Root>"
    order = rng.randrange(8)
    body = root + meta if order == 0 else root if order == 1 else meta + root
    return ('<?xml version="1.0" encoding="utf-8"?>\n<KeePassFile>%s</KeePassFile>\n' % body).encode("utf-8", "surrogatepass")


def mutate(rng, doc):
    r = rng.random()
    if r < 0.82 or not doc:
        return doc
    d = bytearray(doc)
    if r < 0.88:
        return bytes(d[:rng.randint(0, len(d))])  # truncated
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(d))
        op = rng.random()
        if op < 0.4:
            d[i] = rng.choice(b'"\\{}[],:\x00\x01\x7f\x80\xc3\xff \n0u')
        elif op < 0.7:
            del d[i]
        else:
            d.insert(i, rng.choice(b'"\\{}[],:\x00\x80\xe9 '))
    return bytes(d)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old"); ap.add_argument("new")
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work", default="/tmp/adv-fuzz")
    ap.add_argument("--formats", default="json,keepassxc-csv,bitwarden-json")
    a = ap.parse_args()
    pw, old, new = prepare_work(a)
    # Base vaults made by the old binary, used by both.
    base = os.path.join(a.work, "base")
    os.makedirs(base)
    seed_doc = json.dumps({"vaultfile_export": 1, "entries": [
        {"name": n, "value": "old-" + n, "fields": {"username": "u"}, "created": 5, "modified": 6}
        for n in ["a", "db01", "e0003", "LD_PRELOAD", "caf\u00e9", "z", "api/key", "A\u030a"]]}).encode()
    vaults = base_vaults(old, pw, base, [("empty", [], False), ("full", [], True), ("hist", ["--keep-history", "3"], True),
                                         ("histempty", ["--keep-history", "3"], True)], seed_doc)
    # histempty: every seeded entry put and removed, the history of names not in the vault.
    for n in ["a", "db01", "e0003", "LD_PRELOAD", "caf\u00e9", "z", "api/key", "A\u030a"]:
        rc, _, err = old.run(["rm", n, "--vault", vaults["histempty"], "--password-file", pw])
        assert rc == 0, (n, err)
    gens = {"json": native_json, "keepassxc-csv": keepassxc_csv, "bitwarden-json": bitwarden_json, "keepass-xml": keepass_xml}
    gens.update({fmt: foreign_csv(fmt) for fmt in FOREIGN_CSV})
    formats = a.formats.split(",")
    rng = random.Random(a.seed)
    stats = {"cases": 0, "diffs": 0, "ok": 0, "failed": 0, "rule_checked": 0, "rule_problems": 0, "exact_met": 0, "diffs_exact_met": 0}
    import exact_rule
    by_status = {}
    errors = {}
    for case in range(a.cases):
        fmt = formats[case % len(formats)]
        CLEAN[0] = rng.random() < 0.6
        doc = gens[fmt](rng)
        if not CLEAN[0]:
            doc = mutate(rng, doc)
        kind = rng.choice(["empty", "empty", "full", "hist", "histempty"])
        opts = []
        if rng.random() < 0.4: opts.append("--overwrite")
        if rng.random() < 0.3: opts.append("--json")
        if fmt in FOREIGN_CSV:  # the import's options that name or choose entries
            if rng.random() < 0.2: opts.append("--dry-run")
            if rng.random() < 0.2: opts += ["--prefix", "in"]
            if "--overwrite" not in opts and rng.random() < 0.3: opts.append("--skip-existing")
        use_stdin = rng.random() < 0.3
        results = []
        for side in (old, new):
            side.forget_state()
            v, f = "case.vault", "input"  # relative to the side's folder: the same text for both
            shutil.copyfile(vaults[kind], os.path.join(side.dir, v))
            open(os.path.join(side.dir, f), "wb").write(doc)
            start = int(time.time() * 1000)
            args = ["import", "--format", fmt, "--vault", v, "--password-file", pw] + opts + ([] if use_stdin else [f])
            rc, out, err = side.run(args, doc if use_stdin else b"")
            end = int(time.time() * 1000)
            rc2, exp, err2 = side.run(["export", "--format", "json", "--vault", v, "--password-file", pw])
            hist = b""
            if kind.startswith("hist") and rc == 0:
                names = [e["name"] for e in json.loads(exp)["entries"]][:5] + ["a", "db01"]
                for n in names:
                    hist += b"%d|" % 0 + b"|".join(x if not isinstance(x, int) else b"%d" % x for x in side.run(["history", n, "--vault", v, "--password-file", pw])) + b"\n"
                hist += b"|".join(x if not isinstance(x, int) else b"%d" % x for x in side.run(["trash", "list", "--vault", v, "--password-file", pw])) + b"\n"
                hist += b"|".join(x if not isinstance(x, int) else b"%d" % x for x in side.run(["verify", "--vault", v, "--password-file", pw])) + b"\n"
                hist = re.sub(rb"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?Z?", b"TIME", hist)
            results.append((rc, out, err, rc2, mask_now(exp, start, end), err2, hist))
        met = False
        if fmt != "json":  # other managers' formats: the numbering rule, on NEW's own import into an empty vault
            checked = exact_rule.check(new, pw, vaults["empty"], fmt, doc, ["--prefix", "in"] if "--prefix" in opts else [])
            if checked is not None:
                stats["rule_checked"] += 1
                met = checked[1]
                stats["exact_met"] += met
                if checked[0]:
                    stats["rule_problems"] += 1
                    path = os.path.join(a.work, "diffs", "rule%05d.%s" % (case, fmt))
                    open(path, "wb").write(doc)
                    print("RULE case %d fmt %s: %s -> %s" % (case, fmt, checked[0][:3], path), flush=True)
        stats["cases"] += 1
        by_status[(fmt, results[0][0])] = by_status.get((fmt, results[0][0]), 0) + 1
        if results[0][0] != 0:
            first = re.sub(rb"'[^']*'", b"'X'", re.sub(rb"\d+", b"N", results[0][2].split(b"\n")[0]))[:90]
            errors[first] = errors.get(first, 0) + 1
        results = [exact_rule.without_new_warnings(r) for r in results]
        if results[0] != results[1] and met:
            stats["diffs_exact_met"] += 1  # expected: a cleaned title met an exact one, or exact folders cleaned ones (att58/att60 F1), the rule held
        elif results[0] != results[1]:
            stats["diffs"] += 1
            path = os.path.join(a.work, "diffs", "case%05d.%s" % (case, fmt))
            open(path, "wb").write(doc)
            labels = ["status", "stdout", "stderr", "export status", "export", "export stderr", "history"]
            what = [labels[i] for i in range(7) if results[0][i] != results[1][i]]
            print("DIFF case %d fmt %s vault %s opts %s stdin %s: %s -> %s" % (case, fmt, kind, opts, use_stdin, what, path), flush=True)
            for i in range(7):
                if results[0][i] != results[1][i]:
                    print("   old %s: %r" % (labels[i], results[0][i][:600] if isinstance(results[0][i], bytes) else results[0][i]))
                    print("   new %s: %r" % (labels[i], results[1][i][:600] if isinstance(results[1][i], bytes) else results[1][i]))
        if case % 200 == 0:
            print("... %d cases, %d diffs" % (stats["cases"], stats["diffs"]), flush=True)
    print("done", stats)
    for k, c in sorted(errors.items(), key=lambda x: -x[1])[:25]:
        print("  %5d %s" % (c, k.decode("utf-8", "replace")))
    for k in sorted(by_status):
        print("  %s exit %d: %d" % (k[0], k[1], by_status[k]))


if __name__ == "__main__":
    main()
