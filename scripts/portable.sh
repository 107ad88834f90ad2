#!/usr/bin/env bash
# The portable vaultfile for USB sticks and the .deb: the release build (scripts/build-release.sh:
# the Swift runtime, libsodium, libargon2, OpenSSL's libcrypto, zlib and libstdc++ linked in statically),
# stripped, and checked. Result: .build-portable/vaultfile-portable
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=.build-portable
mkdir -p "$scratch"
bin=$(./scripts/build-release.sh)
out="$scratch/vaultfile-portable"
cp "$bin" "$out"
strip "$out"

# The checks: no shared libsodium, libargon2, libcrypto, zlib or libstdc++; argon2 bound to libargon2's code; known answers.
echo "== ldd $out"
ldd "$out" | tee "$scratch/ldd.txt"
if grep -E 'libsodium|libargon2|libcrypto|libz\.so|libstdc\+\+|libswift' "$scratch/ldd.txt"; then
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
nm .build/static-deps/sodium-api.o | grep -qE ' T argon2_ctx$' && { echo "portable: FAILED: libsodium still exports argon2_ctx" >&2; exit 1; }
# zlib (the importers' inflate) is inside the binary (its symbols local there), not a shared libz.
grep -qE ' [Tt] inflate$' "$scratch/nm.txt" && grep -qE ' [Tt] crc32_z$' "$scratch/nm.txt" \
  || { echo "portable: FAILED: zlib's inflate is not linked into the binary" >&2; exit 1; }
"$out" selftest
echo "portable: $out ($(du -h "$out" | cut -f1)) is ready"
