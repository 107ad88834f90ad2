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
check "Maintainer is a name and an address off localhost" sh -c "dpkg-deb --field '$deb' Maintainer | grep -Eq '^[^<]+ <[^@<>]+@[^@<>]+\.[a-z]+>\$' && ! dpkg-deb --field '$deb' Maintainer | grep -q '@localhost'"
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
check "git-credential-vaultfile links to vaultfile" test "$(readlink "$root/usr/bin/git-credential-vaultfile")" = vaultfile
check "git-credential-vaultfile runs the credential helper (an unknown operation: exit 0, silent)" \
  sh -c "[ -z \"\$('$root/usr/bin/git-credential-vaultfile' capability </dev/null 2>&1)\" ]"
if command -v man >/dev/null; then
  check "man vaultfile finds the page" sh -c "man -aw vaultfile | grep -qx '$root/usr/share/man/man1/vaultfile.1.gz'"
  check "man vaultfile renders it" sh -c "MANPAGER=cat MANWIDTH=80 man vaultfile 2>/dev/null | grep -q 'an offline, single-file encrypted vault'"
else
  echo "test-deb: man is absent (apt-get install man-db): the man page checks are skipped" >&2
fi
check "bash completion is installed" test -s "$root/usr/share/bash-completion/completions/vaultfile"
check "zsh completion is installed in vendor-completions" test -s "$root/usr/share/zsh/vendor-completions/_vaultfile"
check "nothing in site-functions (Debian's zsh does not search it)" test ! -e "$root/usr/share/zsh/site-functions/_vaultfile"
if command -v zsh >/dev/null; then
  # Asked of a real zsh: the folder the package uses is on its search path.
  check "zsh searches /usr/share/zsh/vendor-completions (zsh -c 'print -l \$fpath')" \
    sh -c "zsh -f -c 'print -l \$fpath' | grep -qx /usr/share/zsh/vendor-completions"
else
  echo "test-deb: zsh is absent (apt-get install zsh): the zsh search-path check is skipped" >&2
fi
check "a Debian changelog for the version (native package)" sh -c "gzip -dc '$root/usr/share/doc/vaultfile/changelog.gz' | head -1 | grep -qx 'vaultfile ($(field Version)) unstable; urgency=medium'"
check "fish completion is installed" test -s "$root/usr/share/fish/vendor_completions.d/vaultfile.fish"
check "bash completion offers the verbs" bash -c "
  source '$root/usr/share/bash-completion/completions/vaultfile'
  COMP_WORDS=(vaultfile ge); COMP_CWORD=1; COMP_LINE='vaultfile ge'; COMP_POINT=12
  _vaultfile vaultfile ge vaultfile
  [[ \" \${COMPREPLY[*]} \" == *' get '* && \" \${COMPREPLY[*]} \" == *' generate '* ]]"
check "the copyright file credits the EFF word list" grep -q 'Electronic Frontier Foundation' "$root/usr/share/doc/vaultfile/copyright"

# lintian: no errors (warnings and notes are printed, not counted).
if command -v lintian >/dev/null; then
  lintian_out=$(lintian --tag-display-limit 0 "$deb" 2>&1 || true)
  [ -n "$lintian_out" ] && printf '%s\n' "$lintian_out" | sed 's/^/test-deb: lintian: /' >&2
  check "lintian reports no error" sh -c "! printf '%s\n' \"\$1\" | grep -q '^E: '" sh "$lintian_out"
else
  echo "test-deb: lintian is absent (apt-get install lintian): the lintian check is skipped" >&2
fi

if "$install" && ! "$previously_installed"; then
  dpkg -r vaultfile >/dev/null
  check "dpkg -r removes the binary" test ! -e /usr/bin/vaultfile
  check "dpkg -r removes the credential helper's link" test ! -e /usr/bin/git-credential-vaultfile
fi

echo "test-deb: $passed passed, $failed failed"
[ "$failed" = 0 ]
