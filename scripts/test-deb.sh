#!/usr/bin/env bash
# Checks the .deb that `make deb` built: its control fields, then the installed package as a user
# meets it: `vaultfile --version` runs, `man vaultfile` shows the page, the completions are in the
# folders bash, zsh and fish search.
#
#   scripts/test-deb.sh [--install] [PACKAGE.deb]
#
# As root with --install (or CI=true), the package is installed with `dpkg -i` into this machine
# and removed afterwards (unless a vaultfile package was installed before, which it replaces
# and leaves as is); otherwise it is unpacked with `dpkg -x` into a temporary folder and checked
# there (MANPATH pointing at it). Ends with "test-deb: N passed, 0 failed".
set -euo pipefail
cd "$(dirname "$0")/.."
install=false
[ "${CI:-}" = true ] && install=true
[ "${1:-}" = --install ] && { install=true; shift; }
deb=${1:-$(ls -t .build-deb/vaultfile_*.deb 2>/dev/null | head -1)}
[ -n "$deb" ] && [ -f "$deb" ] || { echo "test-deb: no package; run 'make deb' first" >&2; exit 1; }
[ "$(id -u)" = 0 ] || install=false

passed=0 failed=0
check() {  # check DESCRIPTION COMMAND…
  local what=$1; shift
  if "$@" >/dev/null 2>&1; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "test-deb: FAILED: $what" >&2; fi
}

# The control file.
field() { dpkg-deb --field "$deb" "$1"; }
check "Package is vaultfile" test "$(field Package)" = vaultfile
check "Architecture is this machine's" test "$(field Architecture)" = "$(dpkg --print-architecture)"
check "Maintainer is set" test -n "$(field Maintainer)"
check "Description is set" test -n "$(field Description)"
only_base_libraries() {
  local package
  for package in $(field Depends | tr ',' '\n' | sed 's/(.*)//'); do
    case "$package" in libc6|libstdc++6|libgcc-s1) ;; *) return 1 ;; esac
  done
}
check "Depends names only libc6, libstdc++6, libgcc-s1" only_base_libraries

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if "$install"; then
  previously_installed=false
  dpkg-query -W -f='${Status}' vaultfile 2>/dev/null | grep -q 'install ok installed' && previously_installed=true
  echo "test-deb: dpkg -i $deb"
  dpkg -i "$deb" >/dev/null
  root=""
else
  echo "test-deb: dpkg -x $deb (not installed: run as root with --install to install it)"
  dpkg -x "$deb" "$work/root"
  root="$work/root"
  export MANPATH="$root/usr/share/man"
fi

version=$(field Version)
check "vaultfile --version runs and prints the package's version" test "$("$root/usr/bin/vaultfile" --version)" = "$version"
check "the binary is stripped" sh -c "! readelf -S '$root/usr/bin/vaultfile' | grep -q '\.symtab'"
check "selftest passes" "$root/usr/bin/vaultfile" selftest
if command -v man >/dev/null; then
  check "man vaultfile finds the page" sh -c "man -aw vaultfile | grep -qx '$root/usr/share/man/man1/vaultfile.1.gz'"
  check "man vaultfile renders it" sh -c "MANPAGER=cat MANWIDTH=80 man vaultfile 2>/dev/null | grep -q 'an offline, single-file encrypted vault'"
else
  echo "test-deb: man is absent (apt-get install man-db): the man page checks are skipped" >&2
fi
check "bash completion is installed" test -s "$root/usr/share/bash-completion/completions/vaultfile"
check "zsh completion is installed" test -s "$root/usr/share/zsh/site-functions/_vaultfile"
check "fish completion is installed" test -s "$root/usr/share/fish/vendor_completions.d/vaultfile.fish"
check "bash completion offers the verbs" bash -c "
  source '$root/usr/share/bash-completion/completions/vaultfile'
  COMP_WORDS=(vaultfile ge); COMP_CWORD=1; COMP_LINE='vaultfile ge'; COMP_POINT=12
  _vaultfile vaultfile ge vaultfile
  [[ \" \${COMPREPLY[*]} \" == *' get '* && \" \${COMPREPLY[*]} \" == *' generate '* ]]"
check "the copyright file credits the EFF word list" grep -q 'Electronic Frontier Foundation' "$root/usr/share/doc/vaultfile/copyright"

if "$install" && ! "$previously_installed"; then
  dpkg -r vaultfile >/dev/null
  check "dpkg -r removes the binary" test ! -e /usr/bin/vaultfile
fi

echo "test-deb: $passed passed, $failed failed"
[ "$failed" = 0 ]
