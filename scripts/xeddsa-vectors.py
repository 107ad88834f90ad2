#!/usr/bin/env python3
"""Write Fixtures/vectors/xeddsa/vectors.json: XEd25519 vectors from an independent implementation.

The implementation is libxeddsa (Syndace), through its PyPI binding `xeddsa` 1.2.0 (libxeddsa
2.0.1, bundled in the wheel). Run once, from the repository root, in a throwaway virtualenv:

    python3 -m venv /tmp/xeddsa-venv
    /tmp/xeddsa-venv/bin/pip install xeddsa==1.2.0
    /tmp/xeddsa-venv/bin/python scripts/xeddsa-vectors.py

It refuses to overwrite an existing file: committed vectors never change (pass --force only
before they are committed). The tests read the JSON; they need neither Python nor pip.

How libxeddsa composes XEdDSA's sign (Signal's spec, rev. 1, section 3.3): `priv_force_sign(k,
False)` clamps k and returns a = k or -k mod q so that aB has sign bit 0; `ed25519_priv_sign(a,
M, Z)` then computes r = hash1(a || M || Z) mod q, R = rB, h = SHA-512(R || A || M) mod q and
s = r + h*a mod q. The public key is `priv_to_curve25519_pub(k)` (X25519 of the clamped k); the
script checks each signature with `ed25519_verify` under `curve25519_pub_to_ed25519_pub(u,
False)`, and records that result as `libxeddsaVerifies`.
"""

import json
import os
import sys

import xeddsa
import xeddsa.bindings
from xeddsa.version import __version__ as XEDDSA_VERSION

LIBXEDDSA_VERSION = "{}.{}.{}".format(xeddsa.bindings.lib.XEDDSA_VERSION_MAJOR, xeddsa.bindings.lib.XEDDSA_VERSION_MINOR,
                                       xeddsa.bindings.lib.XEDDSA_VERSION_REVISION)
OUTPUT = os.path.join("Fixtures", "vectors", "xeddsa", "vectors.json")


def independent_sign(secret: bytes, message: bytes, random: bytes) -> bytes:
    return xeddsa.ed25519_priv_sign(xeddsa.priv_force_sign(secret, False), message, random)


def independent_verify(signature: bytes, message: bytes, u: bytes) -> bool:
    return xeddsa.ed25519_verify(signature, xeddsa.curve25519_pub_to_ed25519_pub(u, False), message)


def edwards_sign_bit(secret: bytes) -> int:
    """The sign bit of E = kB for the clamped k (the case XEdDSA negates when it is 1)."""
    return xeddsa.priv_to_ed25519_pub(secret)[31] >> 7


def flip(data: bytes, bit: int) -> bytes:
    out = bytearray(data)
    out[bit // 8] ^= 1 << (bit % 8)
    return bytes(out)


def main() -> None:
    if os.path.exists(OUTPUT) and "--force" not in sys.argv:
        sys.exit(f"{OUTPUT} exists; committed vectors never change (use --force only before committing)")

    messages = [b"", b"\x00", b"vaultfile XEd25519 vector", os.urandom(32), os.urandom(255), os.urandom(1024)]
    # Keys until both E sign bits have appeared at least twice, at least 8 keys; raw random bytes,
    # not clamped, so the clamp in both implementations is exercised.
    keys, bits = [], []
    while len(keys) < 8 or min(bits.count(0), bits.count(1)) < 2:
        key = os.urandom(32)
        keys.append(key)
        bits.append(edwards_sign_bit(key))

    vectors = []
    for index, secret in enumerate(keys):
        message = messages[index % len(messages)]
        random = os.urandom(64)
        u = xeddsa.priv_to_curve25519_pub(secret)
        signature = independent_sign(secret, message, random)
        verified = independent_verify(signature, message, u)
        assert verified, "libxeddsa does not verify its own signature"
        vectors.append({
            "comment": f"key {index}, E sign bit {edwards_sign_bit(secret)}, message of {len(message)} bytes",
            "secret": secret.hex(), "publicKey": u.hex(), "message": message.hex(), "random": random.hex(),
            "signature": signature.hex(), "valid": True, "libxeddsaVerifies": verified,
        })
    # Every message with one more key each, so the 1 KiB and empty messages meet both sign bits.
    for message in messages:
        secret, random = os.urandom(32), os.urandom(64)
        u = xeddsa.priv_to_curve25519_pub(secret)
        signature = independent_sign(secret, message, random)
        assert independent_verify(signature, message, u)
        vectors.append({
            "comment": f"message of {len(message)} bytes, E sign bit {edwards_sign_bit(secret)}",
            "secret": secret.hex(), "publicKey": u.hex(), "message": message.hex(), "random": random.hex(),
            "signature": signature.hex(), "valid": True, "libxeddsaVerifies": True,
        })

    negatives = []
    base = vectors[2]
    signature, message, u = (bytes.fromhex(base[k]) for k in ("signature", "message", "publicKey"))
    q = 2**252 + 27742317777372353535851937790883648493
    s_plus_q = (int.from_bytes(signature[32:], "little") + q).to_bytes(32, "little")
    cases = [
        ("signature bit 0 (R) flipped", flip(signature, 0), message, u),
        ("signature bit 300 (s) flipped", flip(signature, 300), message, u),
        ("signature last byte (s) changed", signature[:63] + bytes([signature[63] ^ 0x10]), message, u),
        ("s replaced by s + q (non-canonical)", signature[:32] + s_plus_q, message, u),
        ("message bit 3 flipped", signature, flip(message, 3), u),
        ("message with one byte appended", signature, message + b"\x00", u),
        ("public key bit 1 flipped", signature, message, flip(u, 1)),
        ("public key of another vector", signature, message, bytes.fromhex(vectors[3]["publicKey"])),
        ("all-zero signature", bytes(64), message, u),
        ("public key with bit 255 set (vaultfile refuses u >= 2^255 before libxeddsa's masking)", signature, message, flip(u, 255)),
    ]
    for comment, bad_signature, bad_message, bad_u in cases:
        negatives.append({
            "comment": comment, "publicKey": bad_u.hex(), "message": bad_message.hex(),
            "signature": bad_signature.hex(), "valid": False,
            "libxeddsaVerifies": independent_verify(bad_signature, bad_message, bad_u),
        })

    document = {
        "source": f"libxeddsa {LIBXEDDSA_VERSION} through PyPI xeddsa {XEDDSA_VERSION}; written by scripts/xeddsa-vectors.py",
        "scheme": "XEd25519, Signal's XEdDSA and VXEdDSA Signature Schemes, revision 1",
        "fields": "hex; secret is the raw X25519 secret (clamped by the signer), publicKey the X25519 u, "
                  "random the 64-byte Z; valid is vaultfile's expected verdict, libxeddsaVerifies the independent one",
        "vectors": vectors + negatives,
    }
    os.makedirs(os.path.dirname(OUTPUT), exist_ok=True)
    with open(OUTPUT, "w") as handle:
        json.dump(document, handle, indent=1)
        handle.write("\n")
    print(f"{OUTPUT}: {len(vectors)} signatures, {len(negatives)} negative vectors (xeddsa {XEDDSA_VERSION})")


if __name__ == "__main__":
    main()
