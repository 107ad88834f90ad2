#!/usr/bin/env python3
"""Large imports through two binaries (adversarial review, session 6): limits and scale.
    Tests/differential/import_big.py OLD NEW [WORK]"""
import json, os, random, subprocess, sys, shutil, time, re
old, new = sys.argv[1], sys.argv[2]
work = sys.argv[3] if len(sys.argv) > 3 else "/tmp/adv-big"
shutil.rmtree(work, ignore_errors=True); os.makedirs(work)
open(os.path.join(work, "pw"), "w").write("pw")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from difftools import FAST  # noqa: E402
def env(side):
    return {"PATH": "/usr/bin:/bin", "HOME": work, "LANG": "C.UTF-8", "VAULTFILE_STATE_DIR": os.path.join(work, "st-" + side),
            "VAULTFILE_NO_AGENT": "1", "VAULTFILE_ROLLBACK_CHECK": "off", "VAULTFILE_QUIET_WEAK_KDF": "1"}
def run(b, side, args, cwd):
    t = time.time()
    p = subprocess.run([b] + args, capture_output=True, env=env(side), cwd=cwd)
    return p.returncode, p.stdout, p.stderr, time.time() - t
base = os.path.join(work, "base.vault")
subprocess.run([old, "init", "--vault", base, "--password-file", os.path.join(work, "pw")] + FAST, env=env("x"), check=True, capture_output=True)
full = os.path.join(work, "full.vault"); shutil.copy(base, full)
subprocess.run([old, "import", "--format", "json", "--vault", full, "--password-file", os.path.join(work, "pw")],
               input=json.dumps({"vaultfile_export": 1, "entries": [{"name": "e%06d" % i, "value": "x"} for i in range(0, 30000, 7)]}).encode(),
               env=env("x"), check=True, capture_output=True)
def case(label, fmt, doc, vault=base, opts=()):
    res = []
    for side, b in (("old", old), ("new", new)):
        d = os.path.join(work, side); os.makedirs(d, exist_ok=True)
        open(os.path.join(d, "in"), "wb").write(doc)
        shutil.copy(vault, os.path.join(d, "v.vault"))
        rc, out, err, secs = run(b, side, ["import", "--format", fmt, "in", "--vault", "v.vault", "--password-file", "../pw"] + list(opts), d)
        h = subprocess.run(["sh", "-c", "'%s' export --format json --vault v.vault --password-file ../pw | sha256sum" % old], capture_output=True, env=env(side), cwd=d).stdout[:16]
        res.append((rc, out, err[:2000], h))
        print("  %s %s: rc %d %.1fs %s" % (label, side, rc, secs, err[:160]), flush=True)
    print(("SAME " if res[0] == res[1] else "DIFF ") + label, flush=True)
    if res[0] != res[1]:
        for i in range(4):
            if res[0][i] != res[1][i]: print("   old", res[0][i][:400], "\n   new", res[1][i][:400])
rng = random.Random(5)
def native(names, value=lambda i: "v%d" % i):
    return json.dumps({"vaultfile_export": 1, "entries": [{"name": n, "value": value(i), "created": 1, "modified": 2} for i, n in enumerate(names)]}).encode()
n = 50000
names = ["e%06d" % i for i in range(n)]
case("json 50k sorted", "json", native(names))
case("json 50k sorted into full", "json", native(names), full)
case("json 50k sorted into full --overwrite", "json", native(names), full, ["--overwrite"])
shuf = names[:]; rng.shuffle(shuf)
case("json 50k shuffled", "json", native(shuf))
case("json 50k shuffled into full --overwrite", "json", native(shuf), full, ["--overwrite"])
dup = names[:20000] + ["e000005"] + names[20000:30000]
case("json 30k sorted with a repeat", "json", native(dup))
case("json value at limit", "json", native(["big"], lambda i: "a" * (256 << 20)))
case("json value over limit", "json", native(["big"], lambda i: "a" * ((256 << 20) + 1)))
case("json two values over 1 GiB in total", "json", native(["b1", "b2", "b3", "b4", "b5"], lambda i: "a" * (230 << 20)))
# KeePassXC and Bitwarden: repeated titles in runs, increasing then not
titles = ["t%05d" % (i // 3) for i in range(30000)]
def kp(titles):
    rows = ['"Group","Title","Username","Password","URL","Notes","TOTP","Icon","Last Modified","Created"']
    for t in titles:
        rows.append('"Root","%s","u","p","","","","0","2024-01-02T03:04:05Z","2024-01-02T03:04:05Z"' % t)
    return ("\n".join(rows) + "\n").encode()
case("keepassxc 30k repeated titles", "keepassxc-csv", kp(titles))
t2 = titles[:]; rng.shuffle(t2)
case("keepassxc 30k shuffled repeated titles", "keepassxc-csv", kp(t2))
case("keepassxc numbered clash", "keepassxc-csv", kp(["a", "a", "a (2)", "a (2)", "a"]))
case("keepassxc numbered clash 2", "keepassxc-csv", kp(["a (2)", "a", "a"]))
def bw(titles):
    items = [{"id": str(i), "type": 1, "name": t, "revisionDate": "2024-01-02T03:04:05.000Z", "creationDate": "2024-01-01T00:00:00.000Z",
              "login": {"username": "u", "password": "p%d" % i}} for i, t in enumerate(titles)]
    return json.dumps({"encrypted": False, "folders": [], "items": items}).encode()
case("bitwarden 30k repeated titles", "bitwarden-json", bw(titles))
case("bitwarden 30k shuffled", "bitwarden-json", bw(t2))
case("bitwarden numbered clash", "bitwarden-json", bw(["a", "a", "a (2)"]))
case("bitwarden untitled", "bitwarden-json", bw(["", "untitled", "", "untitled (2)"]))
