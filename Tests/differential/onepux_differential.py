#!/usr/bin/env python3
"""Differential of `vaultfile import --format 1pux` between two binaries (issue 44: the ZIP read a part at a time).

    Tests/differential/onepux_differential.py OLD NEW [--cases N] [--seed S] [--work DIR] [--large N,...] [FILE.1pux ...]

Imports into copies of the same vault (empty, holding entries, keeping history), with both binaries, and compares
the exit status, stdout, stderr, `export --format json` (times of "now" masked), `list --long` and the history of
the first names:
- the FILEs given (the fixtures: Fixtures/import/*.1pux, Fixtures/import/hostile/*.1pux);
- the bench's exports (bench/foreign_inputs.py) of the --large sizes;
- N random exports: items with login fields, sections, URLs, tags, password history, attached files, trashed
  items, titles that repeat, one or several vaults and accounts, old-style `{"item": …}` wrappers; written as
  deflated or stored entries, with or without data descriptors, extra fields, a comment, a stub before the
  archive; and hostile ones: truncated, bytes changed (in the compressed data too), a wrong CRC or size, a ZIP
  bomb's ratio, entries that overlap, two export.data, none, an encrypted flag, a ZIP64 marker, JSON not strict.
Each case runs plain and with one of --json, --dry-run, --prefix, --skip-existing, --overwrite, and from a file
or from standard input (which is read whole: the old path on both sides).
"""
import argparse, json, os, random, shutil, struct, sys, time, zlib

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", "..", "bench"))
import difftools as diff  # noqa: E402


# MARK: - A ZIP written by hand (every field chosen)

def zip_bytes(entries, comment=b"", stub=b"", cd_count=None):
    """entries: dicts of name, data, method (0, 8), descriptor (bit 3), crc, size, csize (overrides), extra, flags."""
    out = bytearray(stub)
    central = bytearray()
    for e in entries:
        data = e["data"]
        packed = data if e.get("method", 8) == 0 else (lambda c: c.compress(data) + c.flush())(zlib.compressobj(e.get("level", 6), zlib.DEFLATED, -15))
        crc = e.get("crc", zlib.crc32(data) & 0xFFFFFFFF)
        size, csize = e.get("size", len(data)), e.get("csize", len(packed))
        flags = e.get("flags", 0) | (8 if e.get("descriptor") else 0)
        name = e["name"].encode()
        extra = e.get("extra", b"")
        offset = len(out)
        local_crc, local_size, local_csize = (0, 0, 0) if e.get("descriptor") else (crc, size, csize)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, flags, e.get("method", 8), 0, 0x21, local_crc, local_csize, local_size,
                           len(name), len(extra)) + name + extra
        out += packed
        if e.get("descriptor"):
            out += struct.pack("<IIII", 0x08074B50, crc, csize, size)
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, flags, e.get("method", 8), 0, 0x21, crc, csize, size,
                               len(name), len(extra), 0, 0, 0, 0, e.get("offset", offset)) + name + extra
    start = len(out)
    out += central
    count = len(entries) if cd_count is None else cd_count
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, count, count, len(central), start, len(comment)) + comment
    return bytes(out)


# MARK: - Random exports

def text(rng, n=10):
    alphabet = "abcXYZ019 _-./é中😀\"\\\n\t"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, n)))


def title(rng):
    return rng.choice(["GitHub", "Bank", "mail", "a/b", "", "x" * 200, "Entry", "db01", "café", "Entry (2)"]) if rng.random() < 0.6 \
        else "t%03d" % rng.randint(0, 40)


def item(rng, files):
    i = {"uuid": text(rng, 6), "favIndex": rng.choice([0, 0, 1]), "createdAt": rng.choice([1700000000, 0, -5, None]),
         "updatedAt": rng.choice([1700000100, None]), "state": rng.choice(["active"] * 6 + ["archived", "trashed"]),
         "categoryUuid": rng.choice(["001", "001", "005", "002", "006", "114", "999", "01"]),
         "overview": {"title": title(rng)}, "details": {}}
    if rng.random() < 0.5: i["overview"]["url"] = rng.choice(["https://a.example", "", "http://b.example/x"])
    if rng.random() < 0.3: i["overview"]["urls"] = [{"url": rng.choice(["https://a.example", "https://c.example"]), "label": rng.choice(["", "x"])}]
    if rng.random() < 0.3: i["overview"]["tags"] = [text(rng, 5) for _ in range(rng.randint(0, 3))]
    d = i["details"]
    if rng.random() < 0.8:
        d["loginFields"] = [{"value": text(rng), "designation": rng.choice(["username", "password", "", None]), "name": text(rng, 5),
                             "fieldType": rng.choice(["T", "P", "E"])} for _ in range(rng.randint(0, 4))]
    if rng.random() < 0.2: d["password"] = text(rng)
    if rng.random() < 0.4: d["notesPlain"] = text(rng, 30)
    if rng.random() < 0.4:
        kinds = ["string", "concealed", "totp", "email", "url", "date", "address", "sshKey", "menu", "file"]
        d["sections"] = [{"title": text(rng, 6), "fields": [
            {"title": text(rng, 6), "id": text(rng, 4), "value": value(rng, rng.choice(kinds), files)} for _ in range(rng.randint(0, 3))]}
            for _ in range(rng.randint(0, 2))]
    if rng.random() < 0.3: d["passwordHistory"] = [{"value": text(rng), "time": rng.choice([1600000000, 1650000000, None])} for _ in range(rng.randint(0, 3))]
    if rng.random() < 0.1 and files: d["documentAttributes"] = {"fileName": text(rng, 8), "documentId": rng.choice(list(files) + ["missing"])}
    if rng.random() < 0.1: return {"item": i}
    return i


def value(rng, kind, files):
    if kind == "email": return {"email": {"email_address": text(rng, 8), "provider": "x"}}
    if kind == "address": return {"address": {"street": text(rng, 5), "city": text(rng, 5), "zip": 1234}}
    if kind == "sshKey": return {"sshKey": {"privateKey": text(rng, 20), "metadata": {}}}
    if kind == "date": return {"date": rng.choice([1700000000, None, "x"])}
    if kind == "file" and files: return {"file": {"fileName": text(rng, 8), "documentId": rng.choice(list(files))}}
    if kind == "menu": return {"menu": [text(rng, 4), 5]}
    return {kind: text(rng, 12)}


def random_1pux(rng):
    files = {"d%d" % k: os.urandom(rng.randint(0, 3000)) if rng.random() < 0.5 else text(rng, 40).encode() for k in range(rng.randint(0, 3))}
    accounts = [{"attrs": {"accountName": text(rng, 6), "name": text(rng, 4)}, "vaults": [
        {"attrs": {"name": rng.choice(["Private", "Work", "", text(rng, 5)])}, "items": [item(rng, files) for _ in range(rng.randint(0, 12))]}
        for _ in range(rng.choice([1, 1, 1, 2, 3]))]} for _ in range(rng.choice([1, 1, 1, 2]))]
    doc = {"accounts": accounts}
    if rng.random() < 0.1: doc = {"extra": [1, 2], **doc}
    data = json.dumps(doc, ensure_ascii=rng.random() < 0.5, indent=rng.choice([None, None, 1])).encode()
    if rng.random() < 0.05: data = data.replace(b'"accounts"', b'"accounts" ', 1) + b" "
    if rng.random() < 0.05: data = data[:-1] + b",}"  # not strict JSON
    method = 0 if rng.random() < 0.2 else 8
    entries = [{"name": "export.attributes", "data": b'{"version":3}', "method": method}]
    entries.append({"name": "export.data", "data": data, "method": method, "descriptor": rng.random() < 0.25,
                    "extra": b"\x55\x54\x05\x00\x01\x00\x00\x00\x00" if rng.random() < 0.2 else b""})
    for fid, content in files.items():
        entries.append({"name": "files/%s__%s" % (fid, text(rng, 5).replace("/", "_")) if rng.random() < 0.7 else "files/" + fid,
                        "data": content, "method": rng.choice([0, 8])})
    rng.shuffle(entries)
    hostile = rng.random()
    opts = {}
    if rng.random() < 0.1: opts["comment"] = text(rng, 20).encode()
    if rng.random() < 0.05: opts["stub"] = b"MZ" + os.urandom(rng.randint(0, 100))
    if hostile < 0.55:
        return zip_bytes(entries, **opts)
    target = next(e for e in entries if e["name"] == "export.data")
    if hostile < 0.6: target["crc"] = (zlib.crc32(target["data"]) + 1) & 0xFFFFFFFF
    elif hostile < 0.65: target["size"] = len(target["data"]) + rng.choice([-1, 1, 100])
    elif hostile < 0.68:  # a ZIP bomb: export.data inflates far past its compressed size
        target.update(data=b" " * (3 << 20) + data, method=8, level=9)
    elif hostile < 0.7: entries.append(dict(target))  # two export.data
    elif hostile < 0.72: entries.remove(target)
    elif hostile < 0.74: target["flags"] = 1
    elif hostile < 0.76: target["csize"] = 0xFFFFFFFF
    elif hostile < 0.78: entries.append({"name": "files/x", "data": b"y", "offset": 0})  # overlaps the first entry
    elif hostile < 0.8: target["method"] = 12
    raw = bytearray(zip_bytes(entries, **opts))
    if hostile >= 0.8:
        if rng.random() < 0.5:
            raw = raw[:rng.randint(0, len(raw))]  # truncated
        else:
            for _ in range(rng.randint(1, 4)):  # bytes changed anywhere (the compressed data, headers, the directory)
                raw[rng.randrange(len(raw))] = rng.randrange(256)
    return bytes(raw)


# MARK: - Running

def run_case(old, new, pw, vaults, kind, opts, doc, use_stdin):
    results = []
    for side in (old, new):
        if not use_stdin:
            shutil.copyfile(doc, os.path.join(side.dir, "input.1pux"))
        results.append(side.imported(pw, vaults[kind], "1pux", opts + ([] if use_stdin else ["input.1pux"]),
                                     open(doc, "rb").read() if use_stdin else b"", history=6 if kind == "hist" else 0))
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old"); ap.add_argument("new"); ap.add_argument("files", nargs="*")
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--large", default="", help="sizes of the bench's 1pux exports to compare too (e.g. 10000,100000)")
    ap.add_argument("--work", default="/tmp/onepux-diff")
    a = ap.parse_intermixed_args()
    pw, old, new = diff.prepare_work(a)
    seed_doc = json.dumps({"vaultfile_export": 1, "entries": [
        {"name": n, "value": "old-" + n, "created": 5, "modified": 6} for n in ["GitHub", "Bank", "t001", "mail", "Entry"]]}).encode()
    vaults = diff.base_vaults(old, pw, a.work, [("empty", [], False), ("full", [], True), ("hist", ["--keep-history", "3"], True)], seed_doc)
    inputs = [(os.path.abspath(f), "file") for f in a.files]
    if a.large:
        import foreign_inputs, scale
        for n in map(int, a.large.split(",")):
            foreign_inputs.write(a.work, n, scale.native_json(n)["entries"])
            inputs.append((os.path.join(a.work, "in-%d.1pux" % n), "large"))
    rng = random.Random(a.seed)
    for case in range(a.cases):
        path = os.path.join(a.work, "case%05d.1pux" % case)
        open(path, "wb").write(random_1pux(rng))
        inputs.append((path, "random"))
    cases = diffs = 0
    statuses = {}
    for path, origin in inputs:
        plans = [("empty", [], False), (rng.choice(["empty", "full", "hist"]),
                                        rng.choice([["--json"], ["--dry-run"], ["--prefix", "in"], ["--skip-existing"], ["--overwrite"], []]),
                                        rng.random() < 0.2)]
        if origin != "random":
            plans = [(k, o, False) for k in ("empty", "full", "hist") for o in ([], ["--json"], ["--dry-run"], ["--overwrite"], ["--prefix", "in"])]
            if origin == "large":
                plans = [("empty", [], False), ("full", ["--overwrite"], False), ("empty", ["--dry-run"], False)]
        for kind, opts, use_stdin in plans:
            results = run_case(old, new, pw, vaults, kind, opts, path, use_stdin)
            cases += 1
            statuses[results[0][0]] = statuses.get(results[0][0], 0) + 1
            if results[0] != results[1]:
                diffs += 1
                print("DIFF", path, kind, opts, "stdin" if use_stdin else "file", flush=True)
                diff.print_difference(results[0], results[1])
            elif opts == [] and kind == "empty" and origin != "random":
                print("same  %-50s rc=%d  %s" % (os.path.basename(path), results[0][0],
                                                 results[0][2].decode(errors="replace").strip().split("\n")[-1][:120]), flush=True)
        if cases % 100 == 0:
            print("... %d cases, %d differ" % (cases, diffs), flush=True)
    print("done: %d cases, %d differ; old exit statuses %s" % (cases, diffs, statuses))
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
