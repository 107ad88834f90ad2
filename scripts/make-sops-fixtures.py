#!/usr/bin/env python3
"""Writes Fixtures/import/sops/: sops files encrypted to an age key, the way sops 3 writes them.

sops is not in Debian bookworm, so the fixtures are written here from sops' own source
(github.com/getsops/sops, read at commit 15e36f97, 2026-06-30):
  - aes/cipher.go: each value ENC[AES256_GCM,data:B64,iv:B64,tag:B64,type:T], AES-256-GCM with a
    32-byte IV and a 16-byte tag, the value's path as associated data; bool as True/False; the
    empty string left as it is;
  - sops.go, Tree.Encrypt: the path is the mapping keys joined with ':' plus a trailing ':' (list
    items take their list's path); the MAC is SHA-512 over every value's bytes in document order
    (ToBytes), upper-case hex, encrypted with `lastmodified` (RFC 3339) as associated data;
    keys ending in `_unencrypted` are left in plaintext (and still in the MAC);
  - stores/stores.go and keysource.go of age: the data key is an armored age file per recipient.
The data key is encrypted by the real `age` (-r RECIPIENT --armor). Needs PyPI `cryptography`
(`make sops-fixtures` installs it into .build/sops-venv) and age.

Usage: scripts/make-sops-fixtures.py [OUTDIR]   (default Fixtures/import/sops)
       SOPS_FIXTURE_DATA_KEY=4242…42 scripts/make-sops-fixtures.py DIR   (the fuzz seeds' fixed key)
"""
import base64
import hashlib
import json
import os
import subprocess
import sys

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

LASTMODIFIED = "2026-11-27T07:00:00Z"
SUFFIX = "_unencrypted"


def to_bytes(value):
    """sops.go ToBytes."""
    if isinstance(value, bool):
        return b"True" if value else b"False"
    if isinstance(value, int):
        return str(value).encode()
    if isinstance(value, float):
        return repr(value).encode()  # the fixtures' floats print the same in Go's FormatFloat('f', -1)
    return value.encode()


def type_name(value):
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    return "str"


def encrypt(key, value, aad):
    """aes/cipher.go Encrypt."""
    if value == "":
        return ""
    iv = os.urandom(32)
    sealed = AESGCM(key).encrypt(iv, to_bytes(value), aad.encode())
    b64 = lambda b: base64.b64encode(b).decode()
    return f"ENC[AES256_GCM,data:{b64(sealed[:-16])},iv:{b64(iv)},tag:{b64(sealed[-16:])},type:{type_name(value)}]"


def walk(key, node, path, mac):
    """Tree.Encrypt over a list of (key, value) pairs; returns the encrypted tree."""
    if isinstance(node, list) and node and isinstance(node[0], tuple):
        return [(k, walk(key, v, path + [k], mac)) for k, v in node]
    if isinstance(node, list):
        return [walk(key, v, path, mac) for v in node]
    if node is None:
        return None
    mac.update(to_bytes(node))
    if any(p.endswith(SUFFIX) for p in path):
        return node
    return encrypt(key, node, ":".join(path) + ":")


def yaml_scalar(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if value == "" or value[0] in "\"'!&*[]{}#|>%@`" or ": " in value or value in ("true", "false", "null"):
        return json.dumps(value)
    return value


def yaml_lines(node, indent):
    pad = " " * indent
    lines = []
    for k, v in node:
        if isinstance(v, list) and v and isinstance(v[0], tuple):
            lines.append(f"{pad}{k}:")
            lines += yaml_lines(v, indent + 4)
        elif isinstance(v, list):
            lines.append(f"{pad}{k}:")
            lines += [f"{pad}    - {yaml_scalar(item)}" for item in v]
        else:
            lines.append(f"{pad}{k}: {yaml_scalar(v)}")
    return lines


def json_value(node):
    if isinstance(node, list) and node and isinstance(node[0], tuple):
        return {k: json_value(v) for k, v in node}
    if isinstance(node, list):
        return [json_value(v) for v in node]
    return node


def age_encrypt(recipient, data):
    return subprocess.run(["age", "-r", recipient, "--armor"], input=data, capture_output=True, check=True).stdout.decode()


def write(outdir, name, tree, recipient, style):
    # SOPS_FIXTURE_DATA_KEY (hex) fixes the data key: the fuzz seeds use the fuzzer's own key.
    fixed = os.environ.get("SOPS_FIXTURE_DATA_KEY")
    key = bytes.fromhex(fixed) if fixed else os.urandom(32)
    mac = hashlib.sha512()
    encrypted = walk(key, tree, [], mac)
    mac_value = encrypt(key, mac.hexdigest().upper(), LASTMODIFIED)
    enc = age_encrypt(recipient, key)
    if style == "yaml":
        lines = yaml_lines(encrypted, 0)
        lines += ["sops:", "    age:", f"        - recipient: {recipient}", "          enc: |"]
        lines += ["            " + line for line in enc.splitlines()]
        lines += [f'    lastmodified: "{LASTMODIFIED}"', f"    mac: {mac_value}", f"    unencrypted_suffix: {SUFFIX}", "    version: 3.9.0"]
        text = "\n".join(lines) + "\n"
    else:
        document = json_value(encrypted)
        document["sops"] = {"age": [{"recipient": recipient, "enc": enc}], "lastmodified": LASTMODIFIED, "mac": mac_value,
                            "unencrypted_suffix": SUFFIX, "version": "3.9.0"}
        text = json.dumps(document, indent=4) + "\n"
    with open(os.path.join(outdir, name), "w") as out:
        out.write(text)
    return key.hex()


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else "Fixtures/import/sops"
    os.makedirs(outdir, exist_ok=True)
    keys = os.path.join(outdir, "keys.txt")
    if not os.path.exists(keys):
        subprocess.run(["age-keygen", "-o", keys], check=True, capture_output=True)
    recipient = subprocess.run(["age-keygen", "-y", keys], capture_output=True, check=True).stdout.decode().strip()
    tree = [("db", [("user", "admin"), ("password", "hunter2: with a colon")]),
            ("api_key" + SUFFIX, "public-value"),
            ("ports", [8080, 8443]),
            ("enabled", True),
            ("ratio", 1.5),
            ("empty", ""),
            ("note", "é ünïcode")]
    # The data keys too, so that the library's tests (which run no program) can open the files;
    # the CLI's tests get them from the age stanzas with keys.txt, as a user does.
    datakeys = {name: write(outdir, name, tree, recipient, style) for name, style in (("secrets.yaml", "yaml"), ("secrets.json", "json"))}
    with open(os.path.join(outdir, "datakeys.json"), "w") as out:
        out.write(json.dumps(datakeys, indent=4) + "\n")


if __name__ == "__main__":
    main()
