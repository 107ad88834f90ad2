#!/usr/bin/env python3
"""Differential test of `vaultfile import --format dotenv` between two binaries (h-dotenv).

    Tests/differential/dotenv_windows_differential.py OLD_BINARY NEW_BINARY [--cases N] [--seed S] [--work DIR]

The new binary reads a dotenv file a window at a time (64 KiB windows; DotEnv+Windows.swift), the old
one read it whole: for every input the two must give the same exit status, stdout, stderr and vault.
Generates dotenv files of every kind of line (quotes, escapes, double-quoted values over several
lines, comments, blank lines, CRLF, `export`, a byte order mark, errors), with long values and
padding that put record edges, line ends, CR LF pairs, quotes and multi-byte UTF-8 sequences on and
around the 64 KiB window edges, invalid UTF-8 and NUL bytes, and files without a final line end.
Imports each with both binaries into a fresh copy of the same vault (empty, or holding entries; with
and without --json and --prefix) and compares the outcome and `export --format json` of the vault
(the import's times masked). Prints each case that differs and keeps its input in WORK/diffs/.
"""
import argparse, os, random, re, shutil, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from difftools import FAST, fresh_work  # noqa: E402

WINDOW = 64 * 1024

LINES = [b"A=1\n", b"export B='two words' # c\n", b'C="a\\nb\\t\\"q\\" \\$x \\`y\\` \\\\ \\z"\n',
         b'D="first\nsecond\r\nthird" # after\n', b"E = spaced value # comment\n", b"F=#not a comment\n",
         b"# a comment\n", b"\n", b"\r\n", b"   \t\n", "G=caf\u00e9 \U0001F600\n".encode(), b"H=\r\n", b"I=\n",
         b"export   J=x\n", b"1X-.Y=ok\n", b"N='x' # ok\n", b'O=""\n', b"P=''\n", b"Q=a#b # c\n",
         b'R="multi\n\nline\n"\n', b"T=v\r\n", b"U=\x00nul\n", b'V="\x00"\n', b"A=again\n"]
BROKEN = [b'K="unterminated\n', b"L='open\n", b"no equals here\n", b'M="x" trailing\n', b"=nokey\n",
          "CAF\u00c9=declined\n".encode(), b"\xef\xbb\xbfS=bom inside\n"]
BAD_UTF8 = [b"\x80", b"\xc3", b"\xe2\x82", b"\xff", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"]


def value_text(rng, n):
    alphabet = "abcXYZ019 _-./=#'\u00e9\u4e2d"
    return "".join(rng.choice(alphabet) for _ in range(n)).encode()


def record(rng, index, size):
    """A variable of about `size` bytes, quoted one of several ways, sometimes over several lines."""
    name = b"V%06d" % index
    kind = rng.randrange(5)
    body = value_text(rng, max(0, size))
    if kind == 0:
        return name + b"=" + body.replace(b"#", b"x").replace(b"'", b"x") + b"\n"
    if kind == 1:
        return b"export " + name + b"='" + body.replace(b"'", b"x") + b"'\n"
    if kind == 2:
        # Several lines in double quotes, line ends (LF or CR LF) at random places.
        text = body.replace(b'"', b"q").replace(b"\\", b"/")
        cuts = sorted(rng.randrange(len(text) + 1) for _ in range(rng.randrange(1, 6)))
        parts, last = [], 0
        for cut in cuts:
            parts.append(text[last:cut])
            last = cut
        parts.append(text[last:])
        return name + b'="' + rng.choice([b"\n", b"\r\n"]).join(parts) + b'"\n'
    if kind == 3:
        return name + b'="' + body.replace(b'"', b'\\"') + b'\\n\\t" # c\r\n'
    return name + b" = " + body.replace(b"#", b"x") + b" # comment\n"


def edge_file(rng):
    """Records whose line ends, quotes and characters fall on and near the window edges."""
    out = bytearray(b"\xef\xbb\xbf" if rng.random() < 0.1 else b"")
    index = 0
    while len(out) < WINDOW * rng.choice([1, 2, 3]) + rng.randrange(200):
        edge = (len(out) // WINDOW + 1) * WINDOW
        left = edge - len(out)
        if left > 4000:
            out += b"# filler " + b"f" * (left - 40 + rng.randrange(-30, 30)) + b"\n"
            continue
        r = rng.random()
        if r < 0.5:
            out += record(rng, index, max(0, left - 12 + rng.randrange(-8, 8)))
        elif r < 0.6:
            out += record(rng, index, rng.randrange(WINDOW, 2 * WINDOW + 500))  # longer than a window
        elif r < 0.8:
            out += rng.choice(LINES)
        elif r < 0.88:
            # A multi-byte character or a CR LF across the edge.
            out += b"W%06d=" % index + b"a" * max(0, left - 10 + rng.randrange(-3, 3)) + rng.choice(
                ["\u00e9".encode(), "\u4e2d".encode(), "\U0001F600".encode(), b"\r\n", b"x\r\n"]) + b"\n"
        else:
            out += record(rng, index, rng.randrange(0, 300))
        index += 1
    return out


def small_file(rng):
    out = bytearray(b"\xef\xbb\xbf" if rng.random() < 0.1 else b"")
    for index in range(rng.randrange(0, 15)):
        r = rng.random()
        if r < 0.6:
            out += rng.choice(LINES)
        elif r < 0.8:
            out += record(rng, index, rng.randrange(0, 100))
        else:
            out += rng.choice(BROKEN)
    return out


def make_case(rng, number):
    data = bytearray(edge_file(rng) if number % 3 else small_file(rng))
    r = rng.random()
    if r < 0.15 and data:
        # Invalid UTF-8 somewhere, often near a window edge, sometimes after a syntax error.
        at = rng.choice([rng.randrange(len(data)), min(len(data), WINDOW + rng.randrange(-3, 3))])
        if rng.random() < 0.5:
            data[0:0] = rng.choice(BROKEN)
        data[at:at] = rng.choice(BAD_UTF8)
    elif r < 0.25 and data:
        at = rng.randrange(len(data))
        data[at:at] = rng.choice(BROKEN)  # an error somewhere
    elif r < 0.3:
        at = rng.randrange(len(data) + 1)
        data[at:at] = b"\x00"
    if rng.random() < 0.3 and data.endswith(b"\n"):
        data = data[:-1]  # no final line end
    if rng.random() < 0.05:
        data = data[: rng.randrange(len(data) + 1)]  # cut anywhere
    return bytes(data)


def run(binary, args, env):
    p = subprocess.run([binary] + args, capture_output=True, env=env)
    return p.returncode, p.stdout, p.stderr


def masked(text):
    return re.sub(rb'"(created|modified)" ?: ?[0-9]+', b'"\\1":T', text)


def outcome(binary, work, case_path, base_vault, options, env):
    vault = os.path.join(work, "v.vault")
    shutil.copyfile(base_vault, vault)
    # A fresh state folder: the copy is the vault as first seen, never an older copy of the last run's.
    shutil.rmtree(env["VAULTFILE_STATE_DIR"], ignore_errors=True)
    unlock = ["--vault", vault, "--password-file", os.path.join(work, "pw")]
    status, out, err = run(binary, ["import", "--format", "dotenv", case_path] + options + unlock, env)
    _, export, export_err = run(binary, ["export", "--format", "json"] + unlock, env)
    return status, masked(out), err, masked(export), export_err


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--seed", type=int, default=44)
    parser.add_argument("--work", default="/tmp/dotenv-windows-differential")
    a = parser.parse_args()
    fresh_work(a.work)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": a.work, "VAULTFILE_NO_AGENT": "1",
           "VAULTFILE_STATE_DIR": os.path.join(a.work, "state")}
    bases = []
    for name, entries in [("empty", []), ("holding", [("V000001", b"old"), ("A", b"x"), ("kept/one", b"k")])]:
        path = os.path.join(a.work, name + ".vault")
        unlock = ["--vault", path, "--password-file", os.path.join(a.work, "pw")]
        assert run(a.old, ["init"] + FAST + unlock, env)[0] == 0
        for entry, value in entries:
            subprocess.run([a.old, "set", entry] + unlock, input=value, env=env, check=True, capture_output=True)
        bases.append(path)
    rng = random.Random(a.seed)
    differ = 0
    statuses = {}
    edges = 0
    for number in range(a.cases):
        data = make_case(rng, number)
        edges += len(data) > WINDOW
        case_path = os.path.join(a.work, "case.env")
        with open(case_path, "wb") as f:
            f.write(data)
        base = bases[number % 2]
        options = [[], ["--json"], ["--prefix", "in"], ["--overwrite"]][number % 4]
        old = outcome(a.old, a.work, case_path, base, options, env)
        new = outcome(a.new, a.work, case_path, base, options, env)
        statuses[old[0]] = statuses.get(old[0], 0) + 1
        if old != new:
            differ += 1
            kept = os.path.join(a.work, "diffs", "case-%d.env" % number)
            shutil.copyfile(case_path, kept)
            print("case %d differs (%d bytes, %s): old %s / new %s" % (number, len(data), options, old[0], new[0]))
            print("  old stderr: %r\n  new stderr: %r" % (old[2][:300], new[2][:300]))
    print("%d cases (%d past one window), %d differ; exit statuses of the old binary: %s"
          % (a.cases, edges, differ, dict(sorted(statuses.items()))))
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
