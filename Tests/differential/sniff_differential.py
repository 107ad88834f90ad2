#!/usr/bin/env python3
"""Differential of the format sniffer (`import --format auto`, and a file given with another --format) between two binaries.

    Tests/differential/sniff_differential.py OLD_BINARY NEW_BINARY [FILE...] [--cases N] [--seed S] [--work DIR]

Imports, with --dry-run --json, each FILE given and N generated small files (CSV headers of every tool in any case,
quoted or spaced, headerless rows, dotenv lines, comments, `export`, JSON and XML starts, Ansible Vault and sops
markers, byte order marks, LF and CRLF, non-ASCII and invalid UTF-8) with both binaries: once with no --format (the
sniffer decides), once as --format dotenv and once as --format chrome-csv (the sniffer refuses a file that looks like
another format). Compares exit status, stdout and stderr; prints each case that differs and keeps its input in
WORK/diffs/. A blank line ended by CRLF before the content is left out of the generated files (the byte reading
skips it as it skips LF; the text reading did not: FormatSnifferTests.test_sniff_skipsBlankLinesEndedByCRLF).
"""
import argparse
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from difftools import FAST, fresh_work  # noqa: E402

HEADERS = [["group", "title", "username", "password", "url", "notes"],
           ["folder", "favorite", "type", "name", "notes", "fields", "reprompt", "login_uri", "login_username", "login_password"],
           ["url", "username", "password", "httpRealm", "formActionOrigin", "guid", "timeCreated"],
           ["url", "username", "password", "totp", "extra", "name", "grouping", "fav"],
           ["Title", "Url", "Username", "Password", "OTPAuth", "Favorite", "Archived", "Tags", "Notes"],
           ["username", "username2", "username3", "title", "password", "note", "url", "category", "otpSecret"],
           ["name", "url", "username", "password", "note"], ["name", "value", "username"]]
WORDS = ["a", "Zz9", "p=w", "x,y", "\"q\"", "\u00e9", "\u65e5\u672c", "\u20ac", " ", "\t", "#", "=", "export", "K_1",
         "$ANSIBLE_VAULT;", "!vault", "ENC[AES256_GCM,", "<KeePassFile", "{", "<"]


def generate(rng):
    end = "\r\n" if rng.random() < 0.4 else "\n"
    out = b"\xef\xbb\xbf" if rng.random() < 0.15 else b""
    out += "".join(rng.choice([" ", "\t", "\n"]) for _ in range(rng.randint(0, 2))).encode()
    lines = []
    kind = rng.randint(0, 4)
    if kind <= 1:
        header = list(rng.choice(HEADERS))
        rng.shuffle(header)
        cells = []
        for column in header:
            text = "".join(c.upper() if rng.random() < 0.3 else c for c in column)
            cells.append("\"%s\"" % text if rng.random() < 0.3 else text)
        lines.append(",".join(cells))
    elif kind == 2:
        lines.append(rng.choice(["{\"items\": [], \"folders\": []}", "<KeePassFile>", "$ANSIBLE_VAULT;1.1;AES256", "app: demo"]))
    for _ in range(rng.randint(1, 8)):
        r = rng.randint(0, 4)
        if r == 0:
            key = rng.choice(["A", "DB_PASSWORD", "k9", "_x", "B-C", "\u00e9"])
            lines.append(("export " if rng.random() < 0.2 else "") + key + "=" + "".join(rng.choice(WORDS) for _ in range(rng.randint(0, 4))))
        elif r == 1:
            lines.append(rng.choice(["# comment", "   ", "", "\t# x"]))
        elif r == 2:
            lines.append(",".join(rng.choice(WORDS) for _ in range(rng.randint(1, 5))))
        elif r == 3 and end == "\n":
            lines.append(rng.choice(["sops:", "password: !vault |", "    $ANSIBLE_VAULT;1.1;AES256", "k: ENC[AES256_GCM,data:x]"]))
        else:
            lines.append("".join(rng.choice(WORDS) for _ in range(rng.randint(0, 5))))
    out += end.join(lines).encode()
    if rng.random() < 0.5:
        out += end.encode()
    if rng.random() < 0.1:
        at = rng.randint(0, len(out))
        out = out[:at] + bytes([rng.choice([0xFF, 0xC3, 0x80])]) + out[at:]
    return out


class Side:
    def __init__(self, binary, home):
        self.binary, self.home = binary, home
        os.makedirs(home, exist_ok=True)
        self.env = dict(os.environ, HOME=home, VAULTFILE_STATE_DIR=os.path.join(home, "state"), XDG_CONFIG_HOME=os.path.join(home, "config"),
                        VAULTFILE_NO_AGENT="1", VAULTFILE_QUIET_WEAK_KDF="1", VAULTFILE_QUIET_WEAK_PASSWORD="1")

    def run(self, args):
        done = subprocess.run([self.binary] + args, env=self.env, capture_output=True, timeout=120)
        return done.returncode, done.stdout, done.stderr.replace(self.home.encode(), b"HOME")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old"); ap.add_argument("new"); ap.add_argument("files", nargs="*")
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work", default="/tmp/sniff-diff")
    a = ap.parse_args()
    pw = fresh_work(a.work)
    sides = [Side(os.path.abspath(a.old), os.path.join(a.work, "old")), Side(os.path.abspath(a.new), os.path.join(a.work, "new"))]
    for side in sides:
        rc, _, err = side.run(["init", "--vault", os.path.join(side.home, "v"), "--password-file", pw] + FAST)
        if rc != 0:
            sys.exit("init failed: %s" % err.decode(errors="replace"))
    rng = random.Random(a.seed)
    inputs = [(os.path.basename(path), open(path, "rb").read()) for path in a.files]
    inputs += [("case%05d" % n, generate(rng)) for n in range(a.cases)]
    differ = 0
    for name, data in inputs:
        path = os.path.join(a.work, "input")
        with open(path, "wb") as f:
            f.write(data)
        for given in [[], ["--format", "dotenv"], ["--format", "chrome-csv"]]:
            results = [side.run(["import", "--dry-run", "--json", "--vault", os.path.join(side.home, "v"), "--password-file", pw] + given + [path])
                       for side in sides]
            if results[0] != results[1]:
                differ += 1
                keep = os.path.join(a.work, "diffs", name)
                with open(keep, "wb") as f:
                    f.write(data)
                print("DIFF %s %s: old %r / new %r" % (name, " ".join(given) or "auto", results[0][:3], results[1][:3]))
    print("%d inputs, %d runs each side, %d differ" % (len(inputs), 3 * len(inputs), differ))
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
