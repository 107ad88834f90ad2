#!/usr/bin/env bash
# The release build, the one recipe behind `make release`, `make demo`, `make install`, `make test`'s
# CLI binary, `make portable` (and so the .deb) and `make bench`. Prints the binary's path last.
#
#   scripts/build-release.sh [scratch-path]        (default .build)
#
# What it links in statically, and why (docs/PERFORMANCE.md, "Start-up"): the Swift runtime,
# libsodium, libargon2, OpenSSL's libcrypto, zlib (the importers' inflate) and libstdc++. A start
# then maps no shared library but libc, libm and libgcc_s: the loader had been binding 3,400 of
# libcrypto's symbols and 1,700 of libstdc++'s on every run (5.4 M of the 11.2 M instructions of a
# `get`), and the binary runs on a Debian machine without vaultfile's libraries installed.
# SHARED_LIBS=1 links libsodium, libargon2, libcrypto, zlib and libstdc++ as shared libraries
# instead, for a packager who wants the system's security updates of those libraries to reach vaultfile without
# a rebuild; a start then costs about twice the instructions (`get` on an empty vault 8.9 M against 4.3 M).
#
# The compiler flag -disable-concrete-type-metadata-mangled-name-accessors makes Swift code build
# the metadata of a generic type (swift-argument-parser's Option<String>, Flag<Bool>, ...) by calling
# its accessor with the conformances the compiler already knows, instead of decoding a mangled name
# at run time, which checks each generic requirement by scanning the binary's 4,300 conformance
# records (2.1 M instructions of a `get`). Same program; a slightly larger binary.
#
# libsodium.a carries its own copy of the Argon2 code under libargon2's symbol names, so the two
# archives cannot simply be linked together (and a static libsodium beside a dynamic libargon2
# silently binds the argon2 calls to libsodium's copy). libsodium is therefore relinked into one
# object that keeps only its public API global; then the argon2 names can only reach libargon2.
# scripts/portable.sh checks in the result that they do.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
scratch=${1:-.build}
flags=(-c release --static-swift-stdlib --product vaultfile --scratch-path "$scratch"
       -Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors
       -Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections)
# The code layout: every function in a section of its own (above), and the linker lays out those
# that commands run together, in scripts/text-order.txt's order (made by `make text-order`,
# scripts/text-order.py; docs/PERFORMANCE.md, "Code layout"). The kernel maps a binary's code
# 64 KiB around each page a command touches; with the ~1.5 MB a command runs spread over 19 MB,
# a 10-entry import had 14 MB of it resident. A function missing from the file (renamed or new
# since) is only laid out elsewhere. TEXT_ORDER=FILE takes another file, TEXT_ORDER= none;
# LINK_MAP=FILE writes the linker's map (what text-order.py reads).
text_order=${TEXT_ORDER-scripts/text-order.txt}
if [ -n "$text_order" ] && [ -f "$text_order" ]; then flags+=(-Xlinker "--section-ordering-file=$(realpath "$text_order")"); fi
if [ -n "${LINK_MAP:-}" ]; then flags+=(-Xlinker "-Map=$LINK_MAP"); fi

if [ "${SHARED_LIBS:-0}" = 1 ]; then
  "$SWIFT" build "${flags[@]}" >&2
  echo "$("$SWIFT" build "${flags[@]}" --show-bin-path)/vaultfile"
  exit 0
fi

# The static archives, and stand-in pkg-config files that point the build at them; made again
# only when a system archive is newer than the copy.
deps="$PWD/$scratch/static-deps"
libsodium_a="$(pkg-config --variable=libdir libsodium)/libsodium.a"
libargon2_a="$(pkg-config --variable=libdir libargon2)/libargon2.a"
libcrypto_a="$(pkg-config --variable=libdir libcrypto)/libcrypto.a"
libz_a="$(pkg-config --variable=libdir zlib)/libz.a"
libstdcxx_a=$( { gcc -print-file-name=libstdc++.a || clang -print-file-name=libstdc++.a; } 2>/dev/null | grep / | head -n 1 || true)
for archive in "$libsodium_a" "$libargon2_a" "$libcrypto_a" "$libz_a" "$libstdcxx_a"; do
  [ -f "$archive" ] || { echo "build-release: $archive is missing (make deps installs libsodium-dev, libargon2-dev, libssl-dev, zlib1g-dev; libstdc++.a comes with g++'s libstdc++-dev)" >&2; exit 1; }
done
stamp="$deps/.made"
if [ ! -f "$stamp" ] || [ "$libsodium_a" -nt "$stamp" ] || [ "$libargon2_a" -nt "$stamp" ] \
   || [ "$libcrypto_a" -nt "$stamp" ] || [ "$libz_a" -nt "$stamp" ] || [ "$libstdcxx_a" -nt "$stamp" ] || [ "$0" -nt "$stamp" ]; then
  rm -rf "$deps" && mkdir -p "$deps"
  # Each object's code in a section named after it (`.text` → `.text.LIB.OBJECT`): these C archives
  # are built without function sections, so their code could only stay where the link put it,
  # 2.2 MB of libcrypto with the ~60 objects a command runs spread over all of it, each faulted in
  # with the 64 KiB around it. Named, the objects a command runs are laid out together like the
  # Swift functions (scripts/text-order.txt; docs/PERFORMANCE.md, "Code layout").
  sectioned() {  # ARCHIVE LIB FOLDER: the archive's objects, renamed, in FOLDER, listed in archive order
    mkdir -p "$3" && (cd "$3" && ar x "$1")
    ar t "$1" | while read -r member; do
      objcopy --rename-section ".text=.text.$2.${member%.o}" "$3/$member"
      echo "$3/$member"
    done
  }
  sectioned "$libsodium_a" sodium "$deps/objects-sodium" >"$deps/objects-sodium.list"
  ld -r --whole-archive @"$deps/objects-sodium.list" -o "$deps/sodium-all.o"
  objcopy -w --keep-global-symbol='crypto_*' --keep-global-symbol='sodium_*' --keep-global-symbol='randombytes*' \
    --keep-global-symbol='_crypto_*' --keep-global-symbol='_sodium_*' "$deps/sodium-all.o" "$deps/sodium-api.o"
  ar rcs "$deps/libsodium.a" "$deps/sodium-api.o"
  rm -r "$deps/sodium-all.o" "$deps/objects-sodium" "$deps/objects-sodium.list"
  for pair in "$libargon2_a:argon2:libargon2.a" "$libcrypto_a:libcrypto:libcrypto.a" "$libz_a:zlib:libz.a"; do
    IFS=: read -r archive lib name <<<"$pair"
    objects=$(sectioned "$archive" "$lib" "$deps/objects-$lib")
    # shellcheck disable=SC2086  # one object a word: the member names have no spaces
    ar rcs "$deps/$name" $objects
    rm -r "$deps/objects-$lib"
  done
  # The Swift runtime's link line asks for -lstdc++; the linker searches this folder first and
  # finds only the archive there.
  cp "$libstdcxx_a" "$deps/"
  cat >"$deps/libsodium.pc" <<PC
Name: libsodium
Description: libsodium, API symbols only (static)
Version: $(pkg-config --modversion libsodium)
Cflags: $(pkg-config --cflags libsodium)
Libs: -L$deps -lsodium
PC
  cat >"$deps/libargon2.pc" <<PC
Name: libargon2
Description: libargon2 (static)
Version: $(pkg-config --modversion libargon2)
Cflags: $(pkg-config --cflags libargon2)
Libs: -L$deps -largon2 -lpthread
PC
  cat >"$deps/libcrypto.pc" <<PC
Name: libcrypto
Description: OpenSSL libcrypto (static)
Version: $(pkg-config --modversion libcrypto)
Cflags: $(pkg-config --cflags libcrypto)
Libs: -L$deps -lcrypto -ldl -lpthread
PC
  cat >"$deps/zlib.pc" <<PC
Name: zlib
Description: zlib (static)
Version: $(pkg-config --modversion zlib)
Cflags: $(pkg-config --cflags zlib)
Libs: -L$deps -lz
PC
  touch "$stamp"
fi

flags+=(-Xlinker -L"$deps")
# OpenSSL's ChaCha20 core, which BulkChaCha calls without EVP (CLibCrypto/chacha_shim.h): the C side
# refers to it weakly (the shared libcrypto does not export it), and a weak reference alone does not
# take an object out of an archive; this makes it a strong one here.
flags+=(-Xlinker --undefined=ChaCha20_ctr32)
# The build links again only when its inputs or flags change; a newer order file is neither.
linked="$(PKG_CONFIG_PATH="$deps" "$SWIFT" build "${flags[@]}" --show-bin-path)/vaultfile"
if [ -n "$text_order" ] && [ -f "$text_order" ] && [ "$text_order" -nt "$linked" ]; then rm -f "$linked"; fi
PKG_CONFIG_PATH="$deps" "$SWIFT" build "${flags[@]}" >&2
bin="$(PKG_CONFIG_PATH="$deps" "$SWIFT" build "${flags[@]}" --show-bin-path)/vaultfile"
if ldd "$bin" | grep -E 'libsodium|libargon2|libcrypto|libz\.so|libstdc\+\+|libswift' >&2; then
  echo "build-release: $bin still needs the shared libraries above" >&2
  exit 1
fi
if ! nm "$bin" 2>/dev/null | grep -E ' [Tt] ChaCha20_ctr32$' >/dev/null; then
  echo "build-release: $bin lacks OpenSSL's ChaCha20 core (ChaCha20_ctr32): the keystream would go through EVP" >&2
  exit 1
fi
echo "$bin"
