#!/usr/bin/env bash
# Packs the portable binary (scripts/portable.sh) into a Debian package with the man page and the
# bash, zsh and fish completions: .build-deb/vaultfile_VERSION_ARCH.deb
#
#   scripts/deb.sh [BINARY]     (default: .build-portable/vaultfile-portable)
#
# The package depends only on what ldd shows the binary needs (libc6, and libstdc++6 or
# libgcc-s1 if they appear), with libc6's version from the newest GLIBC_ symbol it uses.
# MAINTAINER overrides the Maintainer field (default: the project's address below, never a
# localhost one, which lintian refuses). The package is native (no Debian revision), so it carries
# usr/share/doc/vaultfile/changelog.gz, a Debian changelog made from the version, dated from
# SOURCE_DATE_EPOCH, else the last git commit, so that two builds of one commit are identical.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-.build-portable/vaultfile-portable}
[ -x "$bin" ] || { echo "deb: $bin is missing; run 'make portable' first" >&2; exit 1; }
bin=$(realpath "$bin")

version=$("$bin" --version)
arch=$(dpkg --print-architecture)
out=.build-deb
stage="$out/vaultfile_${version}_${arch}"
rm -rf "$stage" && mkdir -p "$stage/DEBIAN"
umask 022

maintainer=${MAINTAINER:-vaultfile maintainers <maintainers@vaultfile.example.org>}

# Debian's zsh searches vendor-completions, not site-functions (which it leaves to /usr/local).
BIN="$bin" DESTDIR="$stage" PREFIX=/usr MAN_GZIP=1 ZSH_COMPLETION_DIR=share/zsh/vendor-completions \
  ./scripts/install.sh install >/dev/null

# The libraries the binary needs, as package names; anything else means it is not the portable one.
depends=()
while read -r library; do
  case "$library" in
    linux-vdso.so.*|ld-linux*|/lib*/ld-linux*) ;;
    libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|libutil.so.*) depends+=(libc6) ;;
    libstdc++.so.*) depends+=(libstdc++6) ;;
    libgcc_s.so.*) depends+=(libgcc-s1) ;;
    *) echo "deb: $bin needs $library, which a portable vaultfile must not; build it with 'make portable'" >&2; exit 1 ;;
  esac
done < <(ldd "$bin" | awk '{print $1}')
glibc=$(objdump -T "$bin" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
depends_line=""
for package in $(printf '%s\n' "${depends[@]}" | sort -u); do
  entry=$package
  [ "$package" = libc6 ] && [ -n "$glibc" ] && entry="libc6 (>= $glibc)"
  depends_line+="${depends_line:+, }$entry"
done

# Copyright: the binary carries statically linked libraries and the EFF word list.
install -d "$stage/usr/share/doc/vaultfile"
cat > "$stage/usr/share/doc/vaultfile/copyright" <<'TEXT'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: vaultfile
Comment: The vaultfile binary links these libraries in statically: libsodium (ISC),
 libargon2 (CC0-1.0 or Apache-2.0), OpenSSL's libcrypto (Apache-2.0), zlib (Zlib)
 and the Swift runtime and standard library (Apache-2.0 with Runtime Library
 Exception).

Files: data/eff_large_wordlist.txt
Copyright: 2016 Electronic Frontier Foundation
License: CC-BY-3.0
 The EFF Large Wordlist for passphrases, compiled into the binary for
 'vaultfile generate --words'. https://creativecommons.org/licenses/by/3.0/
TEXT

# The portable binary links zlib in on purpose (KDBX's gzip; `ldd` lists only libc, libm and
# libgcc_s), which lintian reports as an error unless the package says so.
install -d "$stage/usr/share/lintian/overrides"
cat > "$stage/usr/share/lintian/overrides/vaultfile" <<'TEXT'
# The static build: zlib is linked in so that the binary needs only libc, libm and libgcc_s.
vaultfile: embedded-library zlib [usr/bin/vaultfile]
TEXT
chmod 0644 "$stage/usr/share/lintian/overrides/vaultfile"

# A native package's changelog (lintian: debian-changelog-file-missing), in dpkg-parsechangelog's format.
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
{
  echo "vaultfile ($version) unstable; urgency=medium"
  echo
  echo "  * vaultfile $version, built from its sources; the project's README and"
  echo "    man page describe the release."
  echo
  echo " -- $maintainer  $(LC_ALL=C date -u -R -d "@$epoch")"
} | gzip -9n > "$stage/usr/share/doc/vaultfile/changelog.gz"
chmod 0644 "$stage/usr/share/doc/vaultfile/changelog.gz"
touch -d "@$epoch" "$stage/usr/share/doc/vaultfile/changelog.gz"

installed_size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
cat > "$stage/DEBIAN/control" <<CONTROL
Package: vaultfile
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $installed_size
Depends: $depends_line
Section: utils
Priority: optional
Description: offline, single-file encrypted vault for secrets
 vaultfile keeps secrets in one encrypted file (Argon2id or PBKDF2, then
 XChaCha20-Poly1305), with a command line made for shells and scripts:
 values through stdin and stdout byte for byte, a git merge driver,
 import and export. This package holds the static build: libsodium,
 libargon2, libcrypto and zlib are linked in.
CONTROL

deb="$out/vaultfile_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "deb: $deb ($(du -h "$deb" | cut -f1); Depends: $depends_line)"
