#!/usr/bin/env python3
"""Writes the small hostile imports of Fixtures/import/hostile (deterministic: same bytes each run).

    python3 Fixtures/import/hostile/make-hostile.py Fixtures/import/hostile

Each is a few kilobytes that would grow to hundreds of megabytes if an import inflated or copied
it without a limit (docs/INTERCHANGE.md, "How far an import may grow its input").
"""
import base64
import gzip
import json
import os
import sys
import zipfile

out = sys.argv[1]
MIB = 1 << 20


def zip_file(path, members):
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in members:
            info = zipfile.ZipInfo(name, date_time=(2023, 11, 14, 22, 13, 20))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, content)


def pux_items(count, document=None):
    items = []
    for index in range(count):
        details = {"loginFields": [], "notesPlain": "", "sections": [], "passwordHistory": []}
        if document:
            details["documentAttributes"] = {"fileName": "zeros.bin", "documentId": document, "decryptedSize": MIB}
        items.append({"uuid": "i%d" % index, "favIndex": 0, "createdAt": 1600000000, "updatedAt": 1600000000,
                      "state": "active", "categoryUuid": "006", "details": details,
                      "overview": {"title": "doc %d" % index}})
    return {"accounts": [{"attrs": {"accountName": "A", "name": "A"}, "vaults": [{"attrs": {"name": "V"}, "items": items}]}]}


# 500 items naming one 1 MiB file of zeros: 4.5 KB that an import would copy into 500 MiB.
zip_file(os.path.join(out, "shared-file-500.1pux"),
         [("export.data", json.dumps(pux_items(500, "doc1"))), ("files/doc1__zeros.bin", bytes(MIB))])
# The same file named by 3 items: within the limit, imported (each item gets its copy).
zip_file(os.path.join(out, "shared-file-3.1pux"),
         [("export.data", json.dumps(pux_items(3, "doc1"))), ("files/doc1__zeros.bin", bytes(MIB))])

# Two members named export.data: which one an unzip tool shows differs, so the archive is refused.
with zipfile.ZipFile(os.path.join(out, "duplicate-export-data.1pux"), "w", compression=zipfile.ZIP_DEFLATED) as archive:
    import warnings
    warnings.simplefilter("ignore")  # zipfile warns of the duplicate name: it is the point
    for title in ("shown", "hidden"):
        info = zipfile.ZipInfo("export.data", date_time=(2023, 11, 14, 22, 13, 20))
        info.compress_type = zipfile.ZIP_DEFLATED
        data = {"accounts": [{"attrs": {"name": "A"}, "vaults": [{"attrs": {"name": "V"}, "items": [
            {"uuid": title, "state": "active", "details": {"password": title}, "overview": {"title": title}}]}]}]}
        archive.writestr(info, json.dumps(data))


def keepass(binaries, entries):
    pool = "".join('<Binary ID="%d" Compressed="True">%s</Binary>' % (i, base64.b64encode(b).decode()) for i, b in enumerate(binaries))
    body = "".join(
        "<Entry><String><Key>Title</Key><Value>e%d</Value></String>"
        "<String><Key>Password</Key><Value>pw</Value></String>"
        "<Binary><Key>zeros.bin</Key><Value Ref=\"%d\"/></Binary></Entry>" % (index, ref) for index, ref in enumerate(entries))
    return ('<?xml version="1.0" encoding="utf-8" standalone="yes"?>\n<KeePassFile><Meta><Generator>hostile</Generator>'
            "<Binaries>%s</Binaries></Meta><Root><Group><Name>Root</Name>%s</Group></Root></KeePassFile>\n" % (pool, body))


def gz(data):
    return gzip.compress(data, compresslevel=9, mtime=0)


# One gzip binary declaring 64 MiB of zeros (about 1000 times its size): refused before inflating.
with open(os.path.join(out, "gzip-ratio.xml"), "w") as f:
    f.write(keepass([gz(bytes(64 * MIB))], [0]))
# One 1 MiB gzip binary (a ratio the per-binary check allows) named by 200 entries: 200 MiB of copies.
with open(os.path.join(out, "gzip-shared-200.xml"), "w") as f:
    f.write(keepass([gz(bytes(MIB))], [0] * 200))
