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
# The code layout (scripts/build-release.sh): the functions scripts/text-order.txt names lie together.
# Ignored, the file would leave them spread over the whole text (19 MB); laid out, 95 % of them lie
# within a window of a quarter of it (a few local names recur in other objects, laid out elsewhere).
if [ -f scripts/text-order.txt ]; then
  hex='function hex(s,  v, i) { v = 0; for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }'
  whole=$(awk "$hex"' $2 == "t" || $2 == "T" { a = hex($1); if (!m++ || a < first) first = a; if (a > last) last = a } END { print last - first }' "$scratch/nm.txt")
  layout=$(awk "$hex"' NR == FNR { sub(/^\.text\./, ""); listed[$0] = 1; next }
                ($2 == "t" || $2 == "T") && ($3 in listed) { print hex($1) }' scripts/text-order.txt "$scratch/nm.txt" \
           | sort -n | awk -v window=$((whole / 4)) '{ a[NR] = $1; while (a[NR] - a[low + 1] > window) low++; if (NR - low > best) best = NR - low }
                                                  END { printf "%d %d\n", NR, best }')
  read -r laid together <<<"$layout"
  echo "== code layout: $together of the $laid functions of scripts/text-order.txt within $((whole / 4 / 1024)) KiB (a quarter of the text)"
  [ "$laid" -gt 1000 ] && [ $((together * 100)) -ge $((laid * 95)) ] \
    || { echo "portable: FAILED: the link did not lay out the functions of scripts/text-order.txt together" >&2; exit 1; }
fi
"$out" selftest
echo "portable: $out ($(du -h "$out" | cut -f1)) is ready"
