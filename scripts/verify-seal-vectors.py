#!/usr/bin/env python3
"""Verify vaultfile's seal signatures with an independent XEdDSA and Ed25519 (libxeddsa).

Reads Fixtures/vectors/seals/seals.json: for each signed fixture of format 1.3, what its encrypted
signature block and seal record hold (written by SealVectorTests from vaultfile's own open). For
each, it rebuilds the seal transcript from docs/FORMAT.md ("Signed seals") and the vault file's own
bytes: the vault id and generation at their offsets, BLAKE2b-512 of the header up to the
signature block (the header length minus the 64-byte trailer and the 426-byte block), and
BLAKE2b-512 of the payload (every byte after the header). The transcript must equal the one
vaultfile signed, and the signature must verify:

- scheme 1 (XEd25519): libxeddsa's ed25519_verify under curve25519_pub_to_ed25519_pub(u, 0);
- scheme 2 (Ed25519 by an ssh-ed25519 slot): ed25519_verify under the 32 bytes of the wire key;
- scheme 3 (delegated): the delegation transcript verifies under the delegating slot's key, and
  the seal under the delegated Ed25519 key.

Every slot attestation is checked the same way, and every signature with one bit flipped must
fail. Needs the PyPI module `xeddsa` (pip install xeddsa==1.2.0; Fixtures/vectors/xeddsa/SOURCE.md).
Run from the repository root; prints "N verified, M failed" and exits 1 on any failure.
"""

import hashlib
import json
import os
import struct
import sys

import xeddsa

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SEAL_PREFIX = b"vaultfile seal signature v1\x00"
DELEGATION_PREFIX = b"vaultfile agent delegation v1\x00"
ATTESTATION_PREFIX = b"vaultfile slot attestation v1\x00"
SIGNATURE_BLOCK_BYTES = 2 + 24 + 400
TRAILER_BYTES = 64


def verifies(scheme: int, key: bytes, signature: bytes, message: bytes) -> bool:
    if scheme == 1:
        if len(key) != 32:
            return False
        edwards = xeddsa.curve25519_pub_to_ed25519_pub(key, False)
    elif scheme == 2:
        if len(key) != 51 or key[:19] != b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20":
            return False
        edwards = key[19:]
    else:
        edwards = key
    return xeddsa.ed25519_verify(signature, edwards, message)


def scheme_of_type(slot_type: int) -> int:
    return 2 if slot_type == 6 else 1


def flipped(data: bytes) -> bytes:
    return bytes([data[0] ^ 1]) + data[1:]


def main() -> int:
    with open(os.path.join(ROOT, "Fixtures", "vectors", "seals", "seals.json")) as handle:
        vectors = json.load(handle)
    verified, failed = 0, 0

    def check(ok: bool, what: str) -> None:
        nonlocal verified, failed
        if ok:
            verified += 1
        else:
            failed += 1
            print("FAILED:", what)

    for seal in vectors["seals"]:
        with open(os.path.join(ROOT, "Fixtures", seal["file"]), "rb") as handle:
            file = handle.read()
        header_length = struct.unpack_from("<H", file, 10)[0]
        vault_id, generation = file[12:28], struct.unpack_from("<Q", file, 28)[0]
        prefix = file[:header_length - TRAILER_BYTES - SIGNATURE_BLOCK_BYTES]
        payload = file[header_length:]
        key = bytes.fromhex(seal["signerKeyHex"])
        signature = bytes.fromhex(seal["signatureHex"])
        file_key_id = bytes.fromhex(seal["fileKeyIDHex"])
        transcript = (SEAL_PREFIX + bytes([seal["scheme"]]) + vault_id + struct.pack("<Q", generation) + file_key_id
                      + bytes([seal["signerPosition"], seal["signerType"]]) + struct.pack("<H", len(key)) + key
                      + hashlib.blake2b(prefix, digest_size=64).digest() + hashlib.blake2b(payload, digest_size=64).digest())
        name = seal["file"]
        check(transcript.hex() == seal["transcriptHex"], f"{name}: the transcript differs from the one vaultfile signed")
        check(verifies(seal["scheme"], key, signature, transcript), f"{name}: seal signature (scheme {seal['scheme']})")
        check(not verifies(seal["scheme"], key, flipped(signature), transcript), f"{name}: a flipped seal signature verifies")
        delegation = seal.get("delegation")
        check((delegation is not None) == (seal["scheme"] == 3), f"{name}: a delegation exactly for scheme 3")
        if delegation:
            message = DELEGATION_PREFIX + vault_id + file_key_id + key + struct.pack("<Q", delegation["expiry"])
            slot_key = bytes.fromhex(delegation["slotKeyHex"])
            delegation_signature = bytes.fromhex(delegation["signatureHex"])
            check(verifies(delegation["scheme"], slot_key, delegation_signature, message), f"{name}: delegation signature")
            check(not verifies(delegation["scheme"], slot_key, flipped(delegation_signature), message), f"{name}: a flipped delegation verifies")
        for position, attestation in enumerate(seal["attestations"]):
            slot_key = bytes.fromhex(attestation["slotKeyHex"])
            label = attestation["label"].encode()
            message = (ATTESTATION_PREFIX + vault_id + bytes([attestation["slotType"]]) + struct.pack("<H", len(slot_key)) + slot_key
                       + bytes([len(label)]) + label)
            adder = bytes.fromhex(attestation["adderKeyHex"])
            attestation_signature = bytes.fromhex(attestation["signatureHex"])
            scheme = scheme_of_type(attestation["adderType"])
            check(verifies(scheme, adder, attestation_signature, message), f"{name}: attestation of slot {position}")
            check(not verifies(scheme, adder, flipped(attestation_signature), message), f"{name}: a flipped attestation of slot {position} verifies")
    print(f"{verified} verified, {failed} failed ({len(vectors['seals'])} seals, libxeddsa through xeddsa {xeddsa.__version__ if hasattr(xeddsa, '__version__') else ''})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
