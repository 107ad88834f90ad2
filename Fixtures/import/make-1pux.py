#!/usr/bin/env python3
"""Writes 1password.1pux: a 1PUX archive in the shape 1Password 8 writes (support.1password.com/1pux-format/).

Deterministic (fixed times in the ZIP), so running it again gives the same bytes:
    python3 Fixtures/import/make-1pux.py Fixtures/import/1password.1pux
"""
import json
import sys
import zipfile

FIELD = {"guarded": False, "multiline": False, "dontGenerate": False,
         "inputTraits": {"keyboard": "default", "correction": "default", "capitalization": "default"}}


def field(title, fid, value):
    return dict(FIELD, title=title, id=fid, value=value)


items = [
    {"uuid": "it1", "favIndex": 1, "createdAt": 1600000000, "updatedAt": 1700000000, "state": "active", "categoryUuid": "001",
     "details": {
         "loginFields": [
             {"value": "heidi@example.com", "id": "", "name": "email", "fieldType": "E", "designation": "username"},
             {"value": "1p-secret", "id": "", "name": "password", "fieldType": "P", "designation": "password"},
             {"value": "✓", "id": "", "name": "remember", "fieldType": "C"}],
         "notesPlain": "Recovery kit printed",
         "sections": [
             {"title": "Security", "name": "sec", "fields": [
                 field("one-time password", "TOTP_1", {"totp": "otpauth://totp/Example:heidi?secret=JBSWY3DPEHPK3PXP&issuer=Example"}),
                 field("PIN", "pin", {"concealed": "2580"}),
                 field("recovery e-mail", "mail", {"email": {"email_address": "backup@example.com", "provider": None}}),
                 field("", "empty", {"string": ""}),
             ]},
             {"title": "Files", "name": "files", "fields": [
                 field("backup codes", "file1", {"file": {"fileName": "codes.txt", "documentId": "doc1", "decryptedSize": 23}}),
             ]}],
         "passwordHistory": [{"value": "1p-older", "time": 1650000000}, {"value": "1p-oldest", "time": 1610000000}]},
     "overview": {"subtitle": "heidi@example.com", "urls": [{"label": "", "url": "https://example.com"},
                                                             {"label": "admin", "url": "https://admin.example.com"}],
                  "title": "Example", "url": "https://example.com", "ps": 71, "pbe": 82.1, "pgrng": True, "tags": ["work", "sso"]}},
    {"uuid": "it2", "favIndex": 0, "createdAt": 1600000000, "updatedAt": 1600000000, "state": "archived", "categoryUuid": "003",
     "details": {"loginFields": [], "notesPlain": "Combination 10-20-30", "sections": [], "passwordHistory": []},
     "overview": {"subtitle": "", "title": "Bike lock", "ps": 0, "pbe": 0, "pgrng": False}},
    {"uuid": "it3", "favIndex": 0, "createdAt": 1600000000, "updatedAt": 1600000000, "state": "active", "categoryUuid": "114",
     "details": {"loginFields": [], "notesPlain": "", "sections": [{"title": "", "name": "", "fields": [
         field("private key", "private_key", {"sshKey": {"privateKey": "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n",
                                                         "metadata": {"publicKey": "ssh-ed25519 AAAA", "fingerprint": "SHA256:x", "keyType": "ed25519"}}}),
         field("address", "addr", {"address": {"street": "1 Main St", "city": "Springfield", "country": "us", "zip": "12345", "state": "IL"}}),
     ]}], "passwordHistory": []},
     "overview": {"subtitle": "", "title": "Deploy key", "ps": 0, "pbe": 0, "pgrng": False}},
    {"uuid": "it4", "favIndex": 0, "createdAt": 1600000000, "updatedAt": 1600000000, "state": "trashed", "categoryUuid": "001",
     "details": {"loginFields": [], "sections": [], "passwordHistory": []},
     "overview": {"title": "Deleted thing"}},
]
data = {"accounts": [{"attrs": {"accountName": "Family", "name": "Heidi", "avatar": "", "email": "heidi@example.com",
                                "uuid": "ACCOUNT1", "domain": "https://my.1password.com/"},
                      "vaults": [{"attrs": {"uuid": "v1", "desc": "", "avatar": "", "name": "Private", "type": "P"}, "items": items[:2]},
                                 {"attrs": {"uuid": "v2", "desc": "", "avatar": "", "name": "Shared", "type": "U"}, "items": items[2:]}]}]}
attributes = {"version": 3, "description": "1Password Unencrypted Export", "createdAt": 1700000000}

with zipfile.ZipFile(sys.argv[1], "w", compression=zipfile.ZIP_DEFLATED) as archive:
    def add(name, content):
        info = zipfile.ZipInfo(name, date_time=(2023, 11, 14, 22, 13, 20))
        info.compress_type = zipfile.ZIP_DEFLATED
        archive.writestr(info, content)
    add("export.attributes", json.dumps(attributes, indent=2))
    add("export.data", json.dumps(data, indent=2, ensure_ascii=False))
    add("files/doc1__codes.txt", "1111-2222\n3333-4444\n55")
