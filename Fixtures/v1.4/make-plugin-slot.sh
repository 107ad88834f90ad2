#!/bin/sh
# Makes Fixtures/v1.4/plugin-slot.vault (issue 41): a signed format-1.4 vault with a password slot and
# an age plugin slot (type 9) for the test plugin Tests/plugin/age-plugin-vftest.py, whose identity
# comes from the seed in plugin-slot.json. Run once from the repository's root with the built binary:
#   VF=.build/debug/vaultfile sh Fixtures/v1.4/make-plugin-slot.sh
# The fixture is never remade by the tests (landed fixtures never change); this says how it was made.
set -eu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/bin"
cp Tests/plugin/age-plugin-vftest.py "$dir/bin/age-plugin-vftest"
chmod 755 "$dir/bin/age-plugin-vftest"
export PATH="$dir/bin:/usr/bin:/bin" VAULTFILE_STATE_DIR="$dir/state" VAULTFILE_NO_AGENT=1 XDG_CONFIG_HOME="$dir/config"
seed=$(python3 -c 'import json; print(json.load(open("Fixtures/v1.4/plugin-slot.json"))["seed"])')
password=$(python3 -c 'import json; print(json.load(open("Fixtures/v1.4/plugin-slot.json"))["password"], end="")')
printf '%s' "$password" > "$dir/pw"
recipient=$(age-plugin-vftest --keygen "$seed" | sed -n 's/^# public key: //p')
v="$dir/plugin-slot.vault"
"$VF" init --vault "$v" --password-file "$dir/pw"
printf 'plugin fixture secret' | "$VF" set db/password --vault "$v" --password-file "$dir/pw"
printf 'line one\nline two\n' | "$VF" set team/note --vault "$v" --password-file "$dir/pw"
"$VF" slot add recipient "$recipient" --label "test plugin" --vault "$v" --password-file "$dir/pw"
cp "$v" Fixtures/v1.4/plugin-slot.vault
