#!/usr/bin/env bash
# Builds a portable vaultfile for USB sticks: the Swift runtime, libsodium, libargon2 and
# OpenSSL's libcrypto linked in statically. Result: .build-portable/vaultfile-portable
#
# libsodium.a carries its own copy of the Argon2 code under libargon2's symbol names, so the two
# archives cannot simply be linked together (and a static libsodium beside a dynamic libargon2
# silently binds the argon2 calls to libsodium's copy). libsodium is therefore relinked into one
# object that keeps only its public API global; then the argon2 names can only reach libargon2.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=.build-portable
deps="$PWD/$scratch/deps"
rm -rf "$deps" && mkdir -p "$deps"
libdir=$(pkg-config --variable=libdir libsodium)

ld -r --whole-archive "$libdir/libsodium.a" -o "$deps/sodium-all.o"
objcopy -w --keep-global-symbol='crypto_*' --keep-global-symbol='sodium_*' --keep-global-symbol='randombytes*' \
  --keep-global-symbol='_crypto_*' --keep-global-symbol='_sodium_*' "$deps/sodium-all.o" "$deps/sodium-api.o"
ar rcs "$deps/libsodium.a" "$deps/sodium-api.o"
cp "$(pkg-config --variable=libdir libargon2)/libargon2.a" "$deps/"
cp "$(pkg-config --variable=libdir libcrypto)/libcrypto.a" "$deps/"

# Stand-in pkg-config files that point the build at the static archives.
cat > "$deps/libsodium.pc" <<PC
Name: libsodium
Description: libsodium, API symbols only (static)
Version: $(pkg-config --modversion libsodium)
Cflags: $(pkg-config --cflags libsodium)
Libs: -L$deps -lsodium
PC
cat > "$deps/libargon2.pc" <<PC
Name: libargon2
Description: libargon2 (static)
Version: $(pkg-config --modversion libargon2)
Cflags: $(pkg-config --cflags libargon2)
Libs: -L$deps -largon2 -lpthread
PC
cat > "$deps/libcrypto.pc" <<PC
Name: libcrypto
Description: OpenSSL libcrypto (static)
Version: $(pkg-config --modversion libcrypto)
Cflags: $(pkg-config --cflags libcrypto)
Libs: -L$deps -lcrypto -ldl -lpthread
PC

rm -f "$scratch/release/vaultfile"
PKG_CONFIG_PATH="$deps" swift build -c release --static-swift-stdlib --product vaultfile --scratch-path "$scratch"
bin="$(swift build -c release --static-swift-stdlib --product vaultfile --scratch-path "$scratch" --show-bin-path)/vaultfile"
out="$scratch/vaultfile-portable"
cp "$bin" "$out"
strip "$out"

# The checks: no shared libsodium, libargon2 or libcrypto; argon2 bound to libargon2's code; known answers.
echo "== ldd $out"
ldd "$out" | tee "$scratch/ldd.txt"
if grep -E 'libsodium|libargon2|libcrypto|libswift' "$scratch/ldd.txt"; then
  echo "portable: FAILED: the binary still needs the shared libraries above" >&2; exit 1
fi
# The KDF module's calls (Swift symbols $s3KDF…) to argon2_ctx must reach libargon2's definition (the one beside
# argon2_type2string, which libsodium does not have), not libsodium's private copy.
nm -n "$bin" > "$scratch/nm.txt"
objdump -d --no-show-raw-insn "$bin" > "$scratch/objdump.txt"
libargon2_ctx=$(awk '/ argon2_type2string$/ {found=1; next} found && / argon2_ctx$/ {print $1; exit} found && !/ argon2_/ {found=0}' "$scratch/nm.txt" | sed 's/^0*//')
called=$(awk '/^[0-9a-f]+ <.*>:$/ {inside = ($2 ~ /^<\$s3KDF/)} inside && /call.*<argon2_ctx>/ {print $(NF-1)}' "$scratch/objdump.txt" | sort -u)
echo "== libargon2's argon2_ctx at 0x$libargon2_ctx; the Swift wrapper calls: $called"
[ -n "$libargon2_ctx" ] && [ -n "$called" ] && [ "$called" = "$libargon2_ctx" ] \
  || { echo "portable: FAILED: the Argon2 calls do not reach libargon2's code" >&2; exit 1; }
nm "$deps/sodium-api.o" | grep -qE ' T argon2_ctx$' && { echo "portable: FAILED: libsodium still exports argon2_ctx" >&2; exit 1; }
"$out" selftest
echo "portable: $out ($(du -h "$out" | cut -f1)) is ready"
