#!/usr/bin/env python3
"""An independent HPKE (PyPI cryptography's MLKEM768-X25519) against vaultfile's post-quantum keys.

Used by PQInteropTests (Tests/VaultFileTests/PostQuantum), run from a venv that has cryptography:
  pq-hpke-check.py open SEED_IDENTITY INFO_HEX ENC_B64 BODY_B64   -> prints the plaintext in hex
  pq-hpke-check.py seal RECIPIENT INFO_HEX PLAINTEXT_HEX          -> prints enc||ciphertext in hex
SEED_IDENTITY is AGE-SECRET-KEY-PQ-1..., RECIPIENT age1pq1...; the seed is expanded here with
SHAKE256 into ML-KEM-768's d||z and X25519's key (X-Wing), independently of vaultfile.
"""
import base64
import hashlib
import sys

from cryptography.hazmat.primitives import hpke
from cryptography.hazmat.primitives.asymmetric import mlkem, x25519

CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def bech32_decode(text):
    text = text.lower()
    sep = text.rindex("1")
    hrp, data = text[:sep], [CHARSET.index(c) for c in text[sep + 1:]]
    values = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp] + data
    chk = 1
    for v in values:
        top = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ v
        for i, g in enumerate((0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)):
            chk ^= g if (top >> i) & 1 else 0
    assert chk == 1, "bad checksum"
    acc, bits, out = 0, 0, bytearray()
    for v in data[:-6]:
        acc = (acc << 5) | v
        bits += 5
        if bits >= 8:
            bits -= 8
            out.append((acc >> bits) & 0xFF)
    return hrp, bytes(out)


def b64(text):
    return base64.b64decode(text + "=" * (-len(text) % 4))


SUITE = hpke.Suite(hpke.KEM.MLKEM768_X25519, hpke.KDF.HKDF_SHA256, hpke.AEAD.CHACHA20_POLY1305)


def private_key(identity):
    hrp, seed = bech32_decode(identity)
    assert hrp == "age-secret-key-pq-" and len(seed) == 32
    expanded = hashlib.shake_256(seed).digest(96)
    return hpke.MLKEM768X25519PrivateKey(mlkem.MLKEM768PrivateKey.from_seed_bytes(expanded[:64]),
                                         x25519.X25519PrivateKey.from_private_bytes(expanded[64:]))


def public_key(recipient):
    hrp, key = bech32_decode(recipient)
    assert hrp == "age1pq" and len(key) == 1216
    return hpke.MLKEM768X25519PublicKey(mlkem.MLKEM768PublicKey.from_public_bytes(key[:1184]),
                                        x25519.X25519PublicKey.from_public_bytes(key[1184:]))


def main(argv):
    if argv[1] == "open":
        _, _, identity, info, enc, body = argv
        print(SUITE.decrypt(b64(enc) + b64(body), private_key(identity), info=bytes.fromhex(info)).hex())
    elif argv[1] == "seal":
        _, _, recipient, info, plaintext = argv
        print(SUITE.encrypt(bytes.fromhex(plaintext), public_key(recipient), info=bytes.fromhex(info)).hex())
    else:
        raise SystemExit("usage: pq-hpke-check.py open|seal ...")


if __name__ == "__main__":
    main(sys.argv)
