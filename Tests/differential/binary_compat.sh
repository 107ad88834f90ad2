#!/usr/bin/env bash
# Cross-binary checks (adversarial review, session 6): vaults made by one binary open in the other,
# with the same outputs. Tests/differential/binary_compat.sh OLD NEW [WORK]
set -uo pipefail
OLD=$1 NEW=$2 W=${3:-/tmp/adv-compat}
rm -rf "$W"; mkdir -p "$W"; cd "$W"
printf 'pw one' > pw; printf 'pw two' > pw2
fails=0
envrun() { local b=$1; shift; env -i PATH=/usr/bin:/bin HOME="$W" LANG=C.UTF-8 VAULTFILE_STATE_DIR="$W/state-$(basename "$(dirname "$b")")-$RANDOM" VAULTFILE_NO_AGENT=1 VAULTFILE_ROLLBACK_CHECK=off VAULTFILE_QUIET_WEAK_KDF=1 "$b" "$@"; }
same() { # label, command args... run with both binaries on copies; compare status/stdout/stderr
  local label=$1; shift
  local o n
  o=$(envrun "$OLD" "$@" 2>&1; echo "rc=$?"); n=$(envrun "$NEW" "$@" 2>&1; echo "rc=$?")
  if [ "$o" != "$n" ]; then echo "DIFF $label"; diff <(echo "$o") <(echo "$n") | head -10; fails=$((fails+1)); else echo "same $label: $(echo "$o" | tail -1)"; fi
}
doc='{"vaultfile_export":1,"entries":[{"name":"a","value":"va","fields":{"username":"u"},"created":1,"modified":2},{"name":"caf\u00e9","value":"vé","created":3,"modified":4},{"name":"t1","value":"x","fields":{"totp":"otpauth://totp/x?secret=JBSWY3DPEHPK3PXP&algorithm=SHA1&digits=8"}},{"name":"t256","value":"x","fields":{"totp":"otpauth://totp/x?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&algorithm=SHA256&digits=8"}},{"name":"t512","value":"x","fields":{"totp":"otpauth://totp/x?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&algorithm=SHA512&digits=8&period=60"}}]}'
for maker in OLD NEW; do
  mb=${!maker}
  # The new binary makes unsigned vaults here (issue 40): a signed one is what the old binary refuses (checked below).
  uns=""; [ "$maker" = NEW ] && uns="--unsigned"
  for kdf in "argon-p1:--kdf-memory 8M --kdf-iterations 1 --kdf-parallelism 1 --allow-weak-kdf" \
             "argon-p4:--kdf-memory 16M --kdf-iterations 2 --kdf-parallelism 4 --allow-weak-kdf" \
             "argon-p3:--kdf-memory 1M --kdf-iterations 3 --kdf-parallelism 3 --allow-weak-kdf" \
             "pbkdf2:--kdf pbkdf2 --kdf-iterations 1000 --allow-weak-kdf"; do
    label=${kdf%%:*}; opts=${kdf#*:}
    v="$W/$maker-$label.vault"
    envrun "$mb" init $uns --vault "$v" --password-file pw $opts >/dev/null 2>&1 || { echo "FAIL init $maker $label"; fails=$((fails+1)); continue; }
    echo "$doc" | envrun "$mb" import --format json --vault "$v" --password-file pw >/dev/null 2>&1 || { echo "FAIL import $maker $label"; fails=$((fails+1)); }
    cp "$v" "$v.orig"
    same "$maker/$label export" export --format json --vault "$v" --password-file pw
    same "$maker/$label wrong pw" get a --vault "$v" --password-file pw2
    same "$maker/$label info" info --vault "$v" --password-file pw
    same "$maker/$label verify" verify --vault "$v" --password-file pw
    for t in t1 t256 t512; do for at in 0 59 1111111109 2000000000 20000000000; do
      same "$maker/$label totp $t @$at" totp "$t" --at "$at" --vault "$v" --password-file pw
    done; done
  done
  # keyslots: password + recipient + keyfile + recovery
  v="$W/$maker-slots.vault"
  envrun "$mb" keygen -o "$W/$maker-id.txt" > "$W/$maker-recipient.txt" 2>/dev/null
  envrun "$mb" keygen --keyfile "$W/$maker-key.bin" >/dev/null 2>&1
  envrun "$mb" init $uns --vault "$v" --password-file pw --kdf-memory 8M --kdf-iterations 1 --kdf-parallelism 1 --allow-weak-kdf >/dev/null 2>&1
  echo "$doc" | envrun "$mb" import --format json --vault "$v" --password-file pw >/dev/null 2>&1
  envrun "$mb" slot add recipient "$(cat "$W/$maker-recipient.txt")" --vault "$v" --password-file pw >/dev/null 2>&1 || echo "note: slot add recipient failed ($maker)"
  envrun "$mb" slot add keyfile "$W/$maker-key.bin" --vault "$v" --password-file pw >/dev/null 2>&1 || echo "note: slot add keyfile failed ($maker)"
  envrun "$mb" slot add password --new-password-file pw2 --vault "$v" --password-file pw >/dev/null 2>&1 || echo "note: slot add password failed ($maker)"
  same "$maker/slots list" slot list --json --vault "$v" --password-file pw
  same "$maker/slots identity" get a --vault "$v" --identity "$W/$maker-id.txt"
  same "$maker/slots keyfile" get a --vault "$v" --keyfile "$W/$maker-key.bin"
  same "$maker/slots pw2" get 'café' --vault "$v" --password-file pw2
  same "$maker/slots wrong" get a --vault "$v" --password-file pw --keyfile "$W/pw"
done
# writes by one binary then read by the other
for pair in "OLD NEW" "NEW OLD"; do
  set -- $pair; wb=${!1}; rb=${!2}
  v="$W/rw-$1.vault"; cp "$W/OLD-argon-p4.vault.orig" "$v"
  printf 'new-secret' | envrun "$wb" set zz --vault "$v" --password-file pw >/dev/null 2>&1
  envrun "$wb" rm a --vault "$v" --password-file pw >/dev/null 2>&1
  o=$(envrun "$rb" export --format json --vault "$v" --password-file pw 2>&1; echo rc=$?)
  echo "$o" | grep -q new-secret && echo "same rw $1->$2" || { echo "DIFF rw $1->$2: $o" | head -3; fails=$((fails+1)); }
done
# error paths: each message and status the same
v="$W/err.vault"; cp "$W/OLD-argon-p1.vault.orig" "$v"
sameb() { local label=$1 script=$2; shift 2; printf '%b' "$script" > "$W/script"; same "$label" "$@" --script "$W/script"; }
for js in "" "--json"; do
  sameb "batch get missing $js" 'get nope\n' batch $js --vault "$v" --password-file pw
  sameb "batch bad verb $js" 'set a --value x\nfrob a\n' batch $js --vault "$v" --password-file pw
  sameb "batch bad name $js" 'set ../x --value x\n' batch $js --vault "$v" --password-file pw
  sameb "batch rm field missing $js" 'rm a --field nope\n' batch $js --vault "$v" --password-file pw
  sameb "batch mv clash $js" 'mv a t1\n' batch $js --vault "$v" --password-file pw
  sameb "batch quote $js" "set 'a --value x\n" batch $js --vault "$v" --password-file pw
  sameb "batch nul -z" 'set n --value "a"\nget a\n' batch -z --vault "$v" --password-file pw
  sameb "batch value-file missing $js" 'set a --value-file /nonexistent\n' batch $js --vault "$v" --password-file pw
  sameb "batch generate bad $js" 'set a --generate --length 0\n' batch $js --vault "$v" --password-file pw
done
same "get missing" get nope --vault "$v" --password-file pw
same "get field missing" get a --field nope --vault "$v" --password-file pw
same "no vault" get a --vault "$W/none.vault" --password-file pw
same "damaged" get a --vault "$W/pw" --password-file pw
same "usage" get --vault "$v" --password-file pw
same "bad option" get a --frob --vault "$v" --password-file pw
same "rollback env" get a --vault "$v" --password-file pw
same "kdf cap" get a --vault "$W/OLD-argon-p4.vault.orig" --password-file pw --kdf-max-memory 1M
same "totp none" totp a --vault "$v" --password-file pw
same "totp bad at" totp t1 --at -5 --vault "$v" --password-file pw
for f in json dotenv csv keepassxc-csv bitwarden-json; do
  printf 'garbage\x00"' > "$W/bad.in"
  same "import garbage $f" import --format "$f" "$W/bad.in" --vault "$v" --password-file pw
  : > "$W/empty.in"
  same "import empty $f" import --format "$f" "$W/empty.in" --vault "$v" --password-file pw
  same "import missing file $f" import --format "$f" "$W/none.in" --vault "$v" --password-file pw
done
printf '{"vaultfile_export":1,"entries":[{"name":"a","value":"x"}]}' > "$W/clash.json"
same "import clash" import --format json "$W/clash.json" --vault "$v" --password-file pw
printf '{"vaultfile_export":1,"entries":[{"name":"cafe\\u0301","value":"x"}]}' > "$W/twin.json"
same "import twin" import --format json "$W/twin.json" --vault "$v" --password-file pw
same "import twin overwrite" import --format json --overwrite "$W/twin.json" --vault "$v" --password-file pw
# git merge driver: base, ours (+x, -a), theirs (+y, a's value changed)
cp "$W/OLD-argon-p1.vault.orig" "$W/m-base.vault"; cp "$W/m-base.vault" "$W/m-ours.vault"; cp "$W/m-base.vault" "$W/m-theirs.vault"
printf 'X' | envrun "$OLD" set x --vault "$W/m-ours.vault" --password-file pw >/dev/null 2>&1
envrun "$OLD" rm t1 --vault "$W/m-ours.vault" --password-file pw >/dev/null 2>&1
printf 'Y' | envrun "$OLD" set y --vault "$W/m-theirs.vault" --password-file pw >/dev/null 2>&1
printf 'A2' | envrun "$OLD" set a --vault "$W/m-theirs.vault" --password-file pw >/dev/null 2>&1
printf 'A3' | envrun "$OLD" set 'café' --vault "$W/m-theirs.vault" --password-file pw >/dev/null 2>&1
printf 'A4' | envrun "$OLD" set 'café' --vault "$W/m-ours.vault" --password-file pw >/dev/null 2>&1
for b in OLD NEW; do
  cp "$W/m-ours.vault" "$W/m-ours-$b.vault"
  r=$(envrun "${!b}" git merge --password-file pw "$W/m-base.vault" "$W/m-ours-$b.vault" "$W/m-theirs.vault" 2>&1; echo rc=$?)
  e=$(envrun "$OLD" export --format json --vault "$W/m-ours-$b.vault" --password-file pw 2>&1 | sed -E 's/"(created|modified)" : [0-9]{13}/T/')
  eval "merge_$b=\$r\$e"
done
if [ "$merge_OLD" != "$merge_NEW" ]; then echo "DIFF merge"; diff <(echo "$merge_OLD") <(echo "$merge_NEW"); fails=$((fails+1)); else echo "same merge: $(echo "$merge_NEW" | head -3 | tr '\n' ' ')"; fi
# agent errors
same "agent status none" agent status
same "lock none" lock --vault "$v"
for b in OLD NEW; do
  bb=${!b}
  sock="$W/agent-$b.sock"
  o=$(env -i PATH=/usr/bin:/bin HOME="$W" LANG=C.UTF-8 VAULTFILE_STATE_DIR="$W/st-agent-$b" VAULTFILE_AGENT_SOCK="$sock" VAULTFILE_ROLLBACK_CHECK=off VAULTFILE_QUIET_WEAK_KDF=1 sh -c "
    '$bb' unlock --vault '$v' --password-file '$W/pw' --timeout 60 ; echo unlock=\$?
    '$bb' get a --vault '$v' ; echo get=\$?
    '$bb' get nope --vault '$v' ; echo getnope=\$?
    '$bb' agent status ; echo status=\$?
    '$bb' lock --vault '$v' ; echo lock=\$?
    '$bb' get a --vault '$v' </dev/null ; echo getlocked=\$?
    '$bb' agent stop ; echo stop=\$?
    '$bb' agent stop ; echo stop2=\$?" 2>&1 | sed "s#$W/agent-$b.sock#SOCK#g; s/agent [0-9]* at/agent N at/g")
  eval "agent_$b=\$o"
done
if [ "$agent_OLD" != "$agent_NEW" ]; then echo "DIFF agent"; diff <(echo "$agent_OLD") <(echo "$agent_NEW"); fails=$((fails+1)); else echo "same agent: $(echo "$agent_NEW" | tr '\n' ' ' | cut -c1-300)"; fi
# A signed vault (the new binary's default, format 1.3): the old binary refuses it as unsupported and says to upgrade.
envrun "$NEW" init --vault "$W/signed.vault" --password-file pw --kdf-memory 8M --kdf-iterations 1 --kdf-parallelism 1 --allow-weak-kdf >/dev/null 2>&1
o=$(envrun "$OLD" get a --vault "$W/signed.vault" --password-file pw 2>&1; echo "rc=$?")
if echo "$o" | grep -q "upgrade" && echo "$o" | grep -q "rc=4"; then echo "same signed: the old binary refuses it (upgrade, exit 4)"; else echo "DIFF signed: $o"; fails=$((fails+1)); fi
echo "fails=$fails"
