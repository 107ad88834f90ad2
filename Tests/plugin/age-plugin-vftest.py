#!/usr/bin/python3
"""age-plugin-vftest: an age plugin for vaultfile's tests, independent of vaultfile.

It follows the C2SP age-plugin spec (recipient-v1 and identity-v1, grease ignored, every command
of the plugin's phases) with the Python standard library only: X25519 (RFC 7748) in pure Python,
HKDF-SHA-256, and an encrypt-then-MAC wrap of the file key (HMAC-SHA-256 keystream and tag).

  age-plugin-vftest --keygen [SEED_HEX]   prints the identity, then '# public key: age1vftest1...'
  age-plugin-vftest --age-plugin=recipient-v1 | --age-plugin=identity-v1

VFTEST_MODE picks a behaviour for the hostile-plugin tests (default: normal); VFTEST_PIN makes
identity-v1 ask for a PIN (request-secret) and refuse a wrong one; VFTEST_LOG names a file where
every command received and the names of the environment's variables are written.
"""
import base64, hashlib, hmac, os, sys, time

NAME = "vftest"
P = 2 ** 255 - 19
CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
MODE = os.environ.get("VFTEST_MODE", "normal")
LOG = os.environ.get("VFTEST_LOG")


def log(text):
    if LOG:
        with open(LOG, "a") as f:
            f.write(text + "\n")


# --- X25519 (RFC 7748) ---------------------------------------------------------------------

def x25519(scalar, u):
    k = bytearray(scalar)
    k[0] &= 248; k[31] &= 127; k[31] |= 64
    k = int.from_bytes(k, "little")
    x1 = int.from_bytes(u, "little") & ((1 << 255) - 1)
    x2, z2, x3, z3, swap = 1, 0, x1, 1, 0
    for t in reversed(range(255)):
        bit = (k >> t) & 1
        swap ^= bit
        if swap:
            x2, x3, z2, z3 = x3, x2, z3, z2
        swap = bit
        a, b = (x2 + z2) % P, (x2 - z2) % P
        aa, bb = a * a % P, b * b % P
        e = (aa - bb) % P
        c, d = (x3 + z3) % P, (x3 - z3) % P
        da, cb = d * a % P, c * b % P
        x3, z3 = (da + cb) ** 2 % P, x1 * (da - cb) ** 2 % P
        x2, z2 = aa * bb % P, e * (aa + 121665 * e) % P
    if swap:
        x2, z2 = x3, z3
    return (x2 * pow(z2, P - 2, P) % P).to_bytes(32, "little")


BASE = (9).to_bytes(32, "little")


def hkdf(ikm, salt, info, length=64):
    prk = hmac.new(salt, ikm, hashlib.sha256).digest()
    out, block, counter = b"", b"", 1
    while len(out) < length:
        block = hmac.new(prk, block + info + bytes([counter]), hashlib.sha256).digest()
        out += block
        counter += 1
    return out[:length]


def wrap_keys(shared, share, public):
    okm = hkdf(shared, share + public, b"age-plugin-vftest wrap")
    return okm[:32], okm[32:]


def wrap(file_key, public):
    ephemeral = os.urandom(32)
    share = x25519(ephemeral, BASE)
    enc, mac = wrap_keys(x25519(ephemeral, public), share, public)
    stream = hmac.new(enc, b"stream", hashlib.sha256).digest()[: len(file_key)]
    ct = bytes(a ^ b for a, b in zip(file_key, stream))
    tag = hmac.new(mac, share + ct, hashlib.sha256).digest()[:16]
    return share, ct + tag


def unwrap(share, body, secret):
    public = x25519(secret, BASE)
    enc, mac = wrap_keys(x25519(secret, share), share, public)
    ct, tag = body[:16], body[16:]
    if not hmac.compare_digest(hmac.new(mac, share + ct, hashlib.sha256).digest()[:16], tag):
        return None
    stream = hmac.new(enc, b"stream", hashlib.sha256).digest()[:16]
    return bytes(a ^ b for a, b in zip(ct, stream))


# --- Bech32 ----------------------------------------------------------------------------------

def polymod(values):
    gen = [0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3]
    chk = 1
    for v in values:
        top = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ v
        for i in range(5):
            chk ^= gen[i] if ((top >> i) & 1) else 0
    return chk


def expand(hrp):
    return [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]


def convert(data, frombits, tobits, pad):
    acc, bits, out = 0, 0, []
    for value in data:
        acc = (acc << frombits) | value
        bits += frombits
        while bits >= tobits:
            bits -= tobits
            out.append((acc >> bits) & ((1 << tobits) - 1))
    if pad and bits:
        out.append((acc << (tobits - bits)) & ((1 << tobits) - 1))
    elif not pad and (bits >= frombits or (acc << (tobits - bits)) & ((1 << tobits) - 1)):
        raise ValueError("bad padding")
    return out


def bech32_encode(hrp, data):
    values = convert(data, 8, 5, True)
    check = polymod(expand(hrp) + values + [0] * 6) ^ 1
    values += [(check >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(CHARSET[v] for v in values)


def bech32_decode(text):
    lower = text.lower()
    pos = lower.rfind("1")
    hrp, values = lower[:pos], [CHARSET.index(c) for c in lower[pos + 1:]]
    if polymod(expand(hrp) + values) != 1:
        raise ValueError("bad checksum")
    return hrp, bytes(convert(values[:-6], 5, 8, False))


def identity_of(secret):
    return bech32_encode("age-plugin-" + NAME + "-", secret).upper()


def recipient_of(secret):
    return bech32_encode("age1" + NAME, x25519(secret, BASE))


# --- Stanzas ---------------------------------------------------------------------------------

def b64(data):
    return base64.b64encode(data).decode().rstrip("=")


def unb64(text):
    return base64.b64decode(text + "=" * (-len(text) % 4))


def read_stanza():
    line = sys.stdin.buffer.readline()
    if not line:
        sys.exit(3)
    parts = line.decode().rstrip("\n").split(" ")
    body = b""
    while True:
        chunk = sys.stdin.buffer.readline().decode().rstrip("\n")
        body += unb64(chunk)
        if len(chunk) < 64:
            break
    log("got " + " ".join(parts[1:]))
    return parts[1], parts[2:], body


def write_stanza(kind, args=(), body=b""):
    text = b64(body)
    lines = [text[i:i + 64] for i in range(0, len(text), 64)]
    if not lines or len(lines[-1]) == 64:
        lines.append("")
    out = "-> " + " ".join([kind] + list(args)) + "\n" + "\n".join(lines) + "\n"
    sys.stdout.buffer.write(out.encode())
    sys.stdout.buffer.flush()


def command(kind, args=(), body=b""):
    """A command of the plugin's phase, and the client's answer."""
    write_stanza(kind, args, body)
    return read_stanza()


def read_phase_one():
    commands = []
    while True:
        kind, args, body = read_stanza()
        if kind == "done":
            return commands
        commands.append((kind, args, body))


# --- recipient-v1 ----------------------------------------------------------------------------

def recipient_v1():
    commands = read_phase_one()
    recipients = [bech32_decode(a[0])[1] for k, a, _ in commands if k == "add-recipient"]
    identities = [bech32_decode(a[0])[1] for k, a, _ in commands if k == "add-identity"]
    keys = [body for k, _, body in commands if k == "wrap-file-key"]
    labels = any(k == "extension-labels" for k, _, _ in commands)
    publics = recipients + [x25519(s, BASE) for s in identities]
    if MODE == "msg":
        command("msg", (), b"touch the test key")
    if MODE == "exit-mid-phase":
        sys.exit(1)
    if MODE == "hang":
        time.sleep(600)
    if MODE == "error":
        command("error", ("recipient", "0"), b"the test key refuses this recipient")
        write_stanza("done")
        return
    if MODE == "labels" and labels:
        command("labels", ("vftest-only",))
    if MODE == "huge-message":
        write_stanza("msg", (), b"x" * (200 * 1024))
    for index, key in enumerate(keys):
        for public in publics:
            share, body = wrap(key, public)
            count = 9 if MODE == "too-many-stanzas" else 1
            for _ in range(count):
                if MODE == "big-stanza":
                    body = body + b"\0" * 5000
                command("recipient-stanza", (str(index), NAME, b64(share)), body)
    if MODE == "stanza-for-other-file":
        command("recipient-stanza", (str(len(keys)), NAME, b64(b"\0" * 32)), b"\0" * 32)
    write_stanza("done")


# --- identity-v1 -----------------------------------------------------------------------------

def identity_v1():
    commands = read_phase_one()
    secrets = [bech32_decode(a[0])[1] for k, a, _ in commands if k == "add-identity"]
    files = {}
    for kind, args, body in commands:
        if kind == "recipient-stanza":
            files.setdefault(int(args[0]), []).append((args[1], args[2:], body))
    if MODE == "hang":
        time.sleep(600)
    if MODE == "exit-mid-phase":
        sys.exit(1)
    pin = os.environ.get("VFTEST_PIN")
    if pin is not None:
        kind, args, answer = command("request-secret", (), b"Enter the PIN of the test key")
        if kind != "ok" or answer.decode() != pin:
            command("error", ("identity", "0"), b"wrong PIN")
            write_stanza("done")
            return
    if MODE == "confirm":
        kind, args, _ = command("confirm", (b64(b"yes"), b64(b"no")), b"Use the test key?")
        if kind != "ok" or args != ["yes"]:
            write_stanza("done")
            return
    if MODE == "request-public":
        kind, _, answer = command("request-public", (), b"Which slot?")
        log("public answer " + (answer.decode() if kind == "ok" else kind))
    if MODE == "unknown-command":
        kind, _, _ = command("frobnicate", (), b"")
        log("unknown answered " + kind)
    if MODE == "msg":
        command("msg", (), b"touch the test key")
    if MODE == "huge-message":
        write_stanza("msg", (), b"x" * (200 * 1024))
    for index in sorted(files):
        for stanza_type, args, body in files[index]:
            if stanza_type != NAME or len(args) != 1 or len(body) != 32:
                continue
            key = None
            for secret in secrets:
                key = unwrap(unb64(args[0]), body, secret)
                if key is not None:
                    break
            if key is None:
                continue
            if MODE == "wrong-key-length":
                key = key + b"\0"
            command("file-key", (str(index),), key)
            if MODE == "duplicate-file-key":
                command("file-key", (str(index),), key)
            if MODE == "extra-file-key":
                command("file-key", (str(len(files)),), key)
            break
    write_stanza("done")


def main():
    if LOG:
        log("argv " + " ".join(sys.argv[1:]))
        log("env " + " ".join(sorted(os.environ)))
        log("cwd " + os.getcwd())
    if len(sys.argv) >= 2 and sys.argv[1] == "--keygen":
        secret = bytes.fromhex(sys.argv[2]) if len(sys.argv) > 2 else os.urandom(32)
        print(identity_of(secret))
        print("# public key: " + recipient_of(secret))
        return
    if sys.argv[1:] == ["--age-plugin=recipient-v1"]:
        recipient_v1()
    elif sys.argv[1:] == ["--age-plugin=identity-v1"]:
        identity_v1()
    else:
        sys.stderr.write("age-plugin-vftest: unknown state machine\n")
        sys.exit(1)


main()
