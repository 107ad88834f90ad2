#!/usr/bin/env python3
"""Writes the KDBX fixtures of Fixtures/kdbx: small valid databases of every variant vaultfile
reads, and hostile ones (docs/INTERCHANGE.md, "kdbx"). Password of all: `kdbx-fixture`.

    python3 Fixtures/kdbx/make-kdbx.py Fixtures/kdbx

Needs pycryptodomex (Cryptodome) and argon2-cffi (Debian: python3-pycryptodome, python3-argon2,
both brought by python3-pykeepass). The KDFs are tiny (Argon2 8 KiB, t=1, p=1; AES-KDF 100 rounds)
so that tests and `make fuzz` open them in microseconds. Random values come from a fixed seed:
the same bytes each run. Format: keepass.info/help/kb/kdbx_4.html and KeePassXC's
src/format/Kdbx4Reader.cpp, Kdbx3Reader.cpp, KeePass2.cpp.
"""
import gzip
import hashlib
import hmac
import os
import random
import struct
import sys

from argon2.low_level import Type, hash_secret_raw
from Cryptodome.Cipher import AES, ChaCha20, Salsa20

PASSWORD = b"kdbx-fixture"
rng = random.Random(45)
def rand(n): return bytes(rng.getrandbits(8) for _ in range(n))

AES_CBC = bytes.fromhex("31c1f2e6bf714350be5805216afc5aff")
CHACHA = bytes.fromhex("d6038a2b8b6f4cb5a524339a31dbb59a")
ARGON2D = bytes.fromhex("ef636ddf8c29444b91f7a9a403e30a0c")
ARGON2ID = bytes.fromhex("9e298b1956db4773b23dfc3ec6f0a1e6")
AESKDF = bytes.fromhex("c9d9f39a628a4460bf740d08c18a4fea")
SIG = bytes.fromhex("03d9a29a67fb4bb5")


def composite(): return hashlib.sha256(hashlib.sha256(PASSWORD).digest()).digest()


def aes_kdf(seed, rounds):
    key = composite()
    cipher = AES.new(seed, AES.MODE_ECB)
    for _ in range(rounds): key = cipher.encrypt(key)
    return hashlib.sha256(key).digest()


class Stream:
    """The inner stream: ChaCha20 (3) or Salsa20 (2)."""
    def __init__(self, kind, key):
        if kind == 3:
            digest = hashlib.sha512(key).digest()
            self.cipher = ChaCha20.new(key=digest[:32], nonce=digest[32:44])
        else:
            self.cipher = Salsa20.new(key=hashlib.sha256(key).digest(), nonce=bytes.fromhex("e830094b97205d2a"))
    def protect(self, value):
        import base64
        return base64.b64encode(self.cipher.encrypt(value)).decode()


def xml(stream, pool_in_meta=False, attachment=b"attached bytes\n", meta_extra=""):
    import base64
    meta_binaries = meta_extra
    if pool_in_meta:
        meta_binaries += '<Binaries><Binary ID="0" Compressed="True">%s</Binary></Binaries>' % base64.b64encode(gzip.compress(attachment, mtime=0)).decode()
    t = base64.b64encode(struct.pack("<Q", 63_800_000_000)).decode()
    times = "<Times><CreationTime>%s</CreationTime><LastModificationTime>%s</LastModificationTime></Times>" % (t, t)
    return ('<?xml version="1.0" encoding="utf-8" standalone="yes"?><KeePassFile><Meta><Generator>make-kdbx.py</Generator>%s</Meta>'
            '<Root><Group><UUID>AAAAAAAAAAAAAAAAAAAAAQ==</UUID><Name>Root</Name><Group><UUID>AAAAAAAAAAAAAAAAAAAAAg==</UUID><Name>Work</Name>'
            '<Entry><UUID>AAAAAAAAAAAAAAAAAAAAAw==</UUID>%s'
            '<String><Key>Title</Key><Value>Mail</Value></String><String><Key>UserName</Key><Value>alice</Value></String>'
            '<String><Key>Password</Key><Value Protected="True">%s</Value></String><String><Key>URL</Key><Value>https://mail.example</Value></String>'
            '<String><Key>otp</Key><Value Protected="True">%s</Value></String><String><Key>PIN</Key><Value Protected="True">%s</Value></String>'
            '<Binary><Key>f.txt</Key><Value Ref="0"/></Binary></Entry></Group></Group></Root></KeePassFile>'
            % (meta_binaries, times, stream.protect("pässword".encode()), stream.protect(b"otpauth://totp/Mail?secret=JBSWY3DPEHPK3PXP"),
               stream.protect(b"1234"))).encode()


def variant_dict(items):
    out = struct.pack("<H", 0x0100)
    for kind, key, value in items:
        out += struct.pack("<B", kind) + struct.pack("<I", len(key)) + key + struct.pack("<I", len(value)) + value
    return out + b"\0"


def kdbx4(cipher=CHACHA, kdf=ARGON2ID, block=1 << 20, mutate=None, inner_mutate=None, payload_gzip=None, extra_header=b"",
          binaries=(b"attached bytes\n",), make_xml=None, packed_mutate=None):
    seed, salt, inner_key = rand(32), rand(32), rand(64)
    iv = rand(12 if cipher == CHACHA else 16)
    if kdf == AESKDF:
        params = variant_dict([(0x42, b"$UUID", AESKDF), (0x05, b"R", struct.pack("<Q", 100)), (0x42, b"S", salt)])
        transformed = aes_kdf(salt, 100)
    else:
        params = variant_dict([(0x42, b"$UUID", kdf), (0x05, b"M", struct.pack("<Q", 8192)), (0x05, b"I", struct.pack("<Q", 1)),
                               (0x04, b"P", struct.pack("<I", 1)), (0x04, b"V", struct.pack("<I", 0x13)), (0x42, b"S", salt)])
        transformed = hash_secret_raw(composite(), salt, time_cost=1, memory_cost=8, parallelism=1, hash_len=32,
                                      type=Type.D if kdf == ARGON2D else Type.ID, version=0x13)
    def field(i, data): return struct.pack("<BI", i, len(data)) + data
    header = SIG + struct.pack("<HH", 0, 4) + field(2, cipher) + field(3, struct.pack("<I", 1)) + field(4, seed) + field(7, iv) \
        + field(11, params) + extra_header + field(0, b"\r\n\r\n")
    stream = Stream(3, inner_key)
    inner = struct.pack("<BI", 1, 4) + struct.pack("<I", 3) + struct.pack("<BI", 2, 64) + inner_key
    for attachment in binaries: inner += struct.pack("<BI", 3, 1 + len(attachment)) + b"\0" + attachment
    inner += struct.pack("<BI", 0, 0)
    plain = inner + (make_xml or xml)(stream)
    if inner_mutate: plain = inner_mutate(plain)
    packed = payload_gzip if payload_gzip is not None else gzip.compress(plain, mtime=0)
    if packed_mutate: packed = packed_mutate(packed)
    key = hashlib.sha256(seed + transformed).digest()
    if cipher == CHACHA:
        encrypted = ChaCha20.new(key=key, nonce=iv).encrypt(packed)
    else:
        pad = 16 - len(packed) % 16
        encrypted = AES.new(key, AES.MODE_CBC, iv).encrypt(packed + bytes([pad]) * pad)
    base = hashlib.sha512(seed + transformed + b"\x01").digest()
    def block_key(i): return hashlib.sha512(struct.pack("<Q", i) + base).digest()
    out = header + hashlib.sha256(header).digest() + hmac.new(block_key(0xFFFFFFFFFFFFFFFF), header, hashlib.sha256).digest()
    blocks = [encrypted[i:i + block] for i in range(0, len(encrypted), block)] + [b""]
    for index, data in enumerate(blocks):
        tag = hmac.new(block_key(index), struct.pack("<QI", index, len(data)) + data, hashlib.sha256).digest()
        if mutate: tag, data_length = mutate(index, tag, len(data))
        else: data_length = len(data)
        out += tag + struct.pack("<I", data_length) + data
    return out


def kdbx31(header_hash=None):
    """KDBX 3.1; header_hash "right" writes Meta/HeaderHash (the header's SHA-256, as KeePass 2.20+
    does), "wrong" the hash of a header that differs in one byte."""
    import base64
    seed, transform_seed, stream_key, start, iv = rand(32), rand(32), rand(32), rand(32), rand(16)
    def field(i, data): return struct.pack("<BH", i, len(data)) + data
    header = SIG + struct.pack("<HH", 1, 3) + field(2, AES_CBC) + field(3, struct.pack("<I", 1)) + field(4, seed) + field(5, transform_seed) \
        + field(6, struct.pack("<Q", 100)) + field(7, iv) + field(8, stream_key) + field(9, start) + field(10, struct.pack("<I", 2)) \
        + field(0, b"\r\n\r\n")
    meta_extra = ""
    if header_hash:
        hashed = header if header_hash == "right" else header[:-5] + bytes([header[-5] ^ 1]) + header[-4:]
        meta_extra = "<HeaderHash>%s</HeaderHash>" % base64.b64encode(hashlib.sha256(hashed).digest()).decode()
    packed = gzip.compress(xml(Stream(2, stream_key), pool_in_meta=True, meta_extra=meta_extra), mtime=0)
    body = start + struct.pack("<I", 0) + hashlib.sha256(packed).digest() + struct.pack("<I", len(packed)) + packed \
        + struct.pack("<I", 1) + bytes(32) + struct.pack("<I", 0)
    key = hashlib.sha256(seed + aes_kdf(transform_seed, 100)).digest()
    pad = 16 - len(body) % 16
    return header + AES.new(key, AES.MODE_CBC, iv).encrypt(body + bytes([pad]) * pad)


def write(name, data):
    with open(os.path.join(out, name), "wb") as f: f.write(data)


out = sys.argv[1]
write("kdbx4-argon2id-chacha20.kdbx", kdbx4())
write("kdbx4-argon2d-aes.kdbx", kdbx4(cipher=AES_CBC, kdf=ARGON2D))
write("kdbx4-aeskdf-chacha20.kdbx", kdbx4(kdf=AESKDF))
write("kdbx31-aeskdf-salsa20.kdbx", kdbx31())
hostile = os.path.join(out, "hostile")
os.makedirs(hostile, exist_ok=True)
out = hostile
# A public custom data field (12) that says it holds 4 GiB - 16 bytes.
write("huge-header-field.kdbx", kdbx4(extra_header=struct.pack("<BI", 12, 0xFFFFFFF0)))
# The first block's length says 4 GiB - 1 (a negative i32).
write("block-4gib.kdbx", kdbx4(mutate=lambda i, tag, n: (tag, 0xFFFFFFFF if i == 0 else n)))
# 64-byte blocks, the HMAC of block 7 with one bit flipped.
write("hmac-block-7.kdbx", kdbx4(block=64, mutate=lambda i, tag, n: (bytes([tag[0] ^ 1]) + tag[1:] if i == 7 else tag, n)))
# 64 MiB of zeros gzipped (about 64 KB): a ratio of about 1000.
write("gzip-bomb.kdbx", kdbx4(payload_gzip=gzip.compress(bytes(64 << 20), mtime=0)))
# The same bomb whose gzip trailer claims 1 KiB: the inflater stops there.
bomb = bytearray(gzip.compress(bytes(64 << 20), mtime=0)); bomb[-4:] = struct.pack("<I", 1024)
write("gzip-lying-size.kdbx", kdbx4(payload_gzip=bytes(bomb)))
# The inner header cut inside its attachment field (a length past the end of the payload).
write("truncated-inner-header.kdbx", kdbx4(inner_mutate=lambda plain: plain[:5 + 4 + 5 + 64 + 5 + 3]))


def amplifying_xml(stream):
    """Ten entries that each name inner binary 0 (Ref="0"), after 512 KiB of whitespace."""
    entries = "".join('<Entry><String><Key>Title</Key><Value>copy %d</Value></String><Binary><Key>zeros.bin</Key><Value Ref="0"/></Binary></Entry>' % i
                      for i in range(10))
    return ('<?xml version="1.0" encoding="utf-8"?><KeePassFile><Meta><Generator>make-kdbx.py</Generator></Meta>%s'
            '<Root><Group><Name>Root</Name>%s</Group></Root></KeePassFile>' % (" " * (512 << 10), entries)).encode()


# Appended after the fixtures above, so that their bytes do not change (the random stream goes on).
# A 4 MiB zero-filled inner binary that ten entries name (40 MiB of copies), 512 KiB of XML
# whitespace, and 24 KiB of random bytes (unreferenced) that keep the payload's ratio under 250:
# a file of about 30 KB whose copies pass 250 times its size (the growth limit follows the file).
write("ref-amplification.kdbx", kdbx4(binaries=(bytes(4 << 20), rand(24 << 10)), make_xml=amplifying_xml))
# KDBX 3.1 with Meta/HeaderHash: the right hash (valid), and the hash of another header (hostile).
write("kdbx31-header-hash-wrong.kdbx", kdbx31(header_hash="wrong"))
out = os.path.dirname(hostile)
write("kdbx31-header-hash.kdbx", kdbx31(header_hash="right"))
# Authenticated KDBX 4 (every HMAC right) whose XML is not well-formed: damage of the file, named.
out = hostile
write("xml-malformed.kdbx", kdbx4(make_xml=lambda stream: b'<?xml version="1.0"?><KeePassFile><Meta></KeePassFile>'))


def lying_inner_field(plain):
    """The inner header's attachment field (after fields 1 and 2) made to claim 14 MiB."""
    at = 5 + 4 + 5 + 64
    return plain[:at] + struct.pack("<BI", 3, 14 << 20) + plain[at + 5:]


# A KDBX 4 whose inner attachment field claims 14 MiB while about 64 KiB follow, and whose gzip
# trailer says the payload inflates to 15 MiB (within 250 times the payload, so neither claim is
# refused up front): the field's buffer must grow with the bytes inflated, not be allocated to
# either claim; refused as damaged (KDBXInnerFieldCLITests measures the memory of a 4 MiB one).
write("inner-field-lying-length.kdbx", kdbx4(binaries=(rand(64 << 10),), inner_mutate=lying_inner_field,
                                            packed_mutate=lambda packed: packed[:-4] + struct.pack("<I", 15 << 20)))
