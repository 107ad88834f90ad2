#!/usr/bin/env python3
"""Writes the plaintext files of a bench pass store: COUNT files in 100 folders, each a password
and three `key: value` lines, named `siteNN/accountNNNNN` plus SUFFIX (`.gpg` for a store a fake
gpg reads as it is; none for one bench/pass_import.sh then encrypts with `gpg --encrypt-files`).
    bench/make_pass_store.py STORE COUNT [SUFFIX]"""
import os
import sys

store, count = sys.argv[1], int(sys.argv[2])
suffix = sys.argv[3] if len(sys.argv) > 3 else ""
for i in range(count):
    folder = os.path.join(store, f"site{i % 100:02d}")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"account{i:05d}{suffix}"), "w") as f:
        f.write(f"password-{i:05d}-xyz\nlogin: user{i}\nurl: https://site{i % 100}.example/login\ncomments: entry {i}\n")
