#!/usr/bin/env bash
# Checks `make install` and `make uninstall` in a temporary DESTDIR: the files and their folders,
# a stripped binary that runs, completions for bash, zsh and fish, a man page that man renders,
# the debug info kept on request, and the MANPATH note.
#
#   scripts/test-install.sh [BINARY]
#
# With BINARY (the test suite passes its debug build) nothing is compiled; without it, `make
# install` builds the release binary first. Ends with "test-install: N passed, 0 failed".
set -euo pipefail
cd "$(dirname "$0")/.."
bin_arg=()
[ $# -ge 1 ] && bin_arg=("BIN=$(realpath "$1")")
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
passed=0 failed=0
check() {  # check DESCRIPTION COMMAND…
  local what=$1; shift
  if "$@" >/dev/null 2>&1; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "test-install: FAILED: $what" >&2; fi
}

make --no-print-directory install DESTDIR="$stage" PREFIX=/usr "${bin_arg[@]}" > "$stage.log" 2>&1 \
  || { cat "$stage.log" >&2; rm -f "$stage.log"; exit 1; }
rm -f "$stage.log"
root="$stage/usr"

# The files, in the folders each tool searches.
for file in bin/vaultfile share/man/man1/vaultfile.1 share/bash-completion/completions/vaultfile \
  share/zsh/site-functions/_vaultfile share/fish/vendor_completions.d/vaultfile.fish; do
  check "$file is installed" test -s "$root/$file"
done
check "the binary is executable" test -x "$root/bin/vaultfile"
check "the binary runs" "$root/bin/vaultfile" --version
check "git-credential-vaultfile is a relative link to vaultfile" test "$(readlink "$root/bin/git-credential-vaultfile")" = vaultfile
check "the link runs the credential helper (an unknown operation: exit 0, silent)" \
  sh -c "[ -z \"\$('$root/bin/git-credential-vaultfile' capability </dev/null 2>&1)\" ]"
check "git-credential-vaultfile.1 links to the man page" test "$(readlink "$root/share/man/man1/git-credential-vaultfile.1")" = vaultfile.1

# Stripped: no symbol table, no DWARF.
check "file(1) says stripped" sh -c "file '$root/bin/vaultfile' | grep -q ', stripped'"
check "no .debug_info section" sh -c "! readelf -S '$root/bin/vaultfile' | grep -q '\.debug_info'"
check "no .symtab section" sh -c "! readelf -S '$root/bin/vaultfile' | grep -q '\.symtab'"

# Completions as each shell loads them.
check "bash completion defines _vaultfile" grep -q '^complete .*-F _vaultfile vaultfile' "$root/share/bash-completion/completions/vaultfile"
check "zsh completion starts with #compdef" sh -c "head -1 '$root/share/zsh/site-functions/_vaultfile' | grep -q '^#compdef vaultfile'"
check "fish completion completes vaultfile" grep -q "^complete -c 'vaultfile'" "$root/share/fish/vendor_completions.d/vaultfile.fish"
check "bash completion offers the verbs" bash -c "
  source '$root/share/bash-completion/completions/vaultfile'
  COMP_WORDS=(vaultfile c); COMP_CWORD=1; COMP_LINE='vaultfile c'; COMP_POINT=11
  _vaultfile vaultfile c vaultfile
  [[ \" \${COMPREPLY[*]} \" == *' cp '* && \" \${COMPREPLY[*]} \" == *' calibrate '* ]]"

# zsh: `make install PREFIX=/usr/local` keeps site-functions, and a real zsh searches it there
# (Debian's zsh has /usr/local/share/zsh/site-functions on its fpath, not /usr/share/zsh/site-functions).
make --no-print-directory install DESTDIR="$stage/local" PREFIX=/usr/local "${bin_arg[@]}" >/dev/null 2>&1
check "PREFIX=/usr/local puts the zsh completion in site-functions" test -s "$stage/local/usr/local/share/zsh/site-functions/_vaultfile"
check "the bash completion has no #! line" sh -c "! head -1 '$root/share/bash-completion/completions/vaultfile' | grep -q '^#!'"
if command -v zsh >/dev/null; then
  check "zsh searches /usr/local/share/zsh/site-functions (zsh -c 'print -l \$fpath')" \
    sh -c "zsh -f -c 'print -l \$fpath' | grep -qx /usr/local/share/zsh/site-functions"
  check "zsh loads _vaultfile from that folder" zsh -f -c "
    fpath=('$stage/local/usr/local/share/zsh/site-functions' \$fpath); autoload -U compinit; compinit -u -D
    [[ \${_comps[vaultfile]} == _vaultfile ]]"
else
  echo "test-install: zsh is absent (apt-get install zsh): the zsh search-path checks are skipped" >&2
fi

# The man page: rendered from the file, and found through MANPATH.
if command -v man >/dev/null; then
  check "man -l renders the page" sh -c "MANPAGER=cat MANWIDTH=80 man -l '$root/share/man/man1/vaultfile.1' 2>/dev/null | grep -q 'an offline, single-file encrypted vault'"
  check "man finds the page on MANPATH" sh -c "[ \"\$(MANPATH='$root/share/man' man -w vaultfile)\" = '$root/share/man/man1/vaultfile.1' ]"
else
  echo "test-install: man is absent (apt-get install man-db): the man page checks are skipped" >&2
fi

# Debug info on request, where gdb looks for it, linked from the binary.
make --no-print-directory install DESTDIR="$stage/debug" PREFIX=/usr DEBUG_INFO=1 "${bin_arg[@]}" >/dev/null 2>&1
# (A binary built without DWARF, such as the portable one CI tests, has none to keep.)
source_binary=${1:-$stage/bin/vaultfile}
if [ $# -eq 0 ] || readelf -S "$source_binary" 2>/dev/null | grep -q '\.debug_info'; then
  check "DEBUG_INFO=1 keeps the DWARF in lib/debug" sh -c "readelf -S '$stage/debug/usr/lib/debug/usr/bin/vaultfile.debug' | grep -q '\.debug_info'"
else
  echo "test-install: skipped: the DWARF check ($source_binary has no debug info)"
fi
check "the binary names its debug file" sh -c "readelf -S '$stage/debug/usr/bin/vaultfile' | grep -q '\.gnu_debuglink'"

# A PREFIX that man does not search gets a note on how to read the page.
note=$(make --no-print-directory install DESTDIR="$stage/other" PREFIX=/opt/vaultfile-test "${bin_arg[@]}" 2>&1)
check "the MANPATH note for a PREFIX man does not search" grep -q 'MANPATH=/opt/vaultfile-test/share/man: man vaultfile' <<<"$note"

# Uninstall removes everything install put there.
make --no-print-directory uninstall DESTDIR="$stage" PREFIX=/usr >/dev/null
make --no-print-directory uninstall DESTDIR="$stage/debug" PREFIX=/usr >/dev/null
left=$(find "$stage/usr" "$stage/debug" \( -type f -o -type l \) | wc -l)
check "uninstall leaves no file behind ($left left)" test "$left" = 0

echo "test-install: $passed passed, $failed failed"
[ "$failed" = 0 ]
