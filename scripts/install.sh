#!/usr/bin/env bash
# Installs (or uninstalls) vaultfile under DESTDIR/PREFIX: what `make install`, `make uninstall`
# and `make deb` run.
#
#   scripts/install.sh install|uninstall
#
# Environment: BIN (the binary to install; required for install), PREFIX (default /usr/local),
# DESTDIR (a staging root, default none), DEBUG_INFO=1 (also keep the binary's debug info in
# PREFIX/lib/debug, where gdb looks for it through the binary's .gnu_debuglink),
# MAN_GZIP=1 (install the man page gzip-compressed, as Debian packages do),
# ZSH_COMPLETION_DIR (the zsh folder below PREFIX, default share/zsh/site-functions, which zsh
# searches under /usr/local; the .deb uses share/zsh/vendor-completions, where Debian's zsh looks).
#
# Installed: PREFIX/bin/vaultfile (stripped), PREFIX/share/man/man1/vaultfile.1, the links the
# binary also answers to (`links`: each PREFIX/bin/NAME -> vaultfile, its man page a link to
# vaultfile's; Sources/vaultfile/Support/Parsing/LinkedNames.swift has the same table), and the
# completions that `vaultfile --generate-completion-script` writes, in the folders bash-completion,
# zsh and fish search under PREFIX.
set -euo pipefail
cd "$(dirname "$0")/.."

action=${1:?usage: scripts/install.sh install|uninstall}
prefix=${PREFIX:-/usr/local}
root="${DESTDIR:-}$prefix"

bin_path="bin/vaultfile"
# The names the binary also runs as (Sources/vaultfile/Support/Parsing/LinkedNames.swift):
# age-plugin-vaultfile for age's plugin protocol, git-credential-vaultfile for git's credential helper.
links=(age-plugin-vaultfile git-credential-vaultfile)
man_path="share/man/man1/vaultfile.1"
bash_path="share/bash-completion/completions/vaultfile"
zsh_path="${ZSH_COMPLETION_DIR:-share/zsh/site-functions}/_vaultfile"
fish_path="share/fish/vendor_completions.d/vaultfile.fish"
# gdb's layout: the debug file's path is the binary's path below lib/debug.
debug_path="lib/debug$prefix/bin/vaultfile.debug"

case "$action" in
install)
  bin=${BIN:?scripts/install.sh: set BIN to the binary to install}
  [ -x "$bin" ] || { echo "install: $bin is not an executable file" >&2; exit 1; }
  umask 022
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT

  # The completions come from the binary itself, so that they match its verbs and options.
  for shell in bash zsh fish; do
    "$bin" --generate-completion-script "$shell" > "$work/completion.$shell"
    [ -s "$work/completion.$shell" ] || { echo "install: $bin wrote no $shell completion" >&2; exit 1; }
  done
  # bash-completion sources the file: a #! line means nothing there (lintian: bash-completion-with-hashbang).
  sed -i '1{/^#!/d}' "$work/completion.bash"

  # Strip a copy: the release binary is about 28 MB with its symbols and DWARF, 16 MB without.
  strip --strip-all -o "$work/vaultfile" "$bin"
  if [ "${DEBUG_INFO:-}" = 1 ]; then
    install -d "$root/$(dirname "$debug_path")"
    objcopy --only-keep-debug "$bin" "$root/$debug_path"
    chmod 0644 "$root/$debug_path"
    objcopy --add-gnu-debuglink="$root/$debug_path" "$work/vaultfile"
  fi

  install -d "$root/bin" "$root/$(dirname "$man_path")" "$root/$(dirname "$bash_path")" \
    "$root/$(dirname "$zsh_path")" "$root/$(dirname "$fish_path")"
  install -m 0755 "$work/vaultfile" "$root/$bin_path"
  if [ "${MAN_GZIP:-}" = 1 ]; then
    gzip -9n < man/vaultfile.1 > "$work/vaultfile.1.gz"
    install -m 0644 "$work/vaultfile.1.gz" "$root/$man_path.gz"
  else
    install -m 0644 man/vaultfile.1 "$root/$man_path"
  fi
  man_suffix=""
  [ "${MAN_GZIP:-}" = 1 ] && man_suffix=.gz
  for link in "${links[@]}"; do
    ln -sfn vaultfile "$root/bin/$link"
    ln -sfn "vaultfile.1$man_suffix" "$root/$(dirname "$man_path")/$link.1$man_suffix"
  done
  install -m 0644 "$work/completion.bash" "$root/$bash_path"
  install -m 0644 "$work/completion.zsh" "$root/$zsh_path"
  install -m 0644 "$work/completion.fish" "$root/$fish_path"
  echo "installed $root/$bin_path ($(du -h "$root/$bin_path" | cut -f1), stripped), its links (${links[*]}), the man page and bash, zsh and fish completions"

  # man finds the page only if PREFIX's man folder is on its search path (manpath(1)).
  if ! (manpath -q 2>/dev/null || true) | tr ':' '\n' | grep -qxF "$prefix/share/man"; then
    echo "note: man does not search $prefix/share/man; read the page with"
    echo "  MANPATH=$prefix/share/man: man vaultfile"
    echo "(the trailing ':' keeps man's usual folders), or put $prefix/bin on PATH or that MANPATH in your shell's profile"
  fi
  ;;
uninstall)
  rm -f "$root/$bin_path" "$root/$man_path" "$root/$man_path.gz" "$root/$bash_path" "$root/$zsh_path" \
    "$root/$fish_path" "$root/$debug_path"
  for link in "${links[@]}"; do
    rm -f "$root/bin/$link" "$root/$(dirname "$man_path")/$link.1" "$root/$(dirname "$man_path")/$link.1.gz"
  done
  echo "removed vaultfile, its man page, completions and debug info from $root"
  ;;
*)
  echo "usage: scripts/install.sh install|uninstall" >&2
  exit 64
  ;;
esac
