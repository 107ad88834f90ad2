# vaultfile — the two commands of the README are `make demo` and `make test`.
# Both install the system libraries they need when missing.

PREFIX ?= /usr/local
SWIFT ?= swift
# age: the tests check vaultfile's keys against the real age and age-keygen (skipped when absent).
APT_PACKAGES := libsodium-dev libargon2-dev libssl-dev zlib1g-dev age
# Outside tools some tests drive (skipped with a message when missing): the agent's completion
# test types into bash under tmux; its hostile-client tests speak raw bytes from python3; get --clip
# is checked through a real xclip on a virtual X display (Xvfb); python3-venv holds the independent
# XEdDSA (PyPI xeddsa, libxeddsa) that checks vaultfile's seal signatures (XEDDSA_VENV); keepassxc's
# keepassxc-cli is the peer audit --hibp is checked against, python3-zxcvbn the estimate's reference;
# folder-by-folder completion is typed into zsh and fish too, test-install asks zsh for its fpath,
# and test-deb runs lintian; gpg, pass, age and ansible-core make the stores and files the importers
# of issue 44 read; openssh-client's ssh-keygen makes the keys age and vaultfile share and receive
# age files to (issue 41), and python3 inflates the zlib-compressed C2SP CCTV age vectors;
# python3-pykeepass is the second reader of the KDBX files export writes (issue 45); openssh-server
# and python3-paramiko are the sshd and second client of the agent's ssh socket (issue 42).
TEST_APT_PACKAGES := tmux bash-completion python3 python3-venv xclip xvfb keepassxc python3-zxcvbn zsh fish lintian gpg pass pass-extension-otp age ansible-core openssh-client python3-pykeepass openssh-server python3-paramiko strace
# What test-deps looks for: a command of each package that has one, then files of those that have none.
TEST_COMMANDS := tmux python3 xclip Xvfb keepassxc-cli zsh fish lintian gpg pass age ansible-vault ssh-keygen ssh-add strace
TEST_FILES := /usr/lib/password-store/extensions/otp.bash /usr/share/bash-completion/bash_completion /usr/lib/python3/dist-packages/zxcvbn/__init__.py /usr/lib/python3/dist-packages/pykeepass/__init__.py /usr/sbin/sshd /usr/lib/python3/dist-packages/paramiko/__init__.py
XEDDSA_VENV := .build/xeddsa-venv
# PyPI pyrage: the second age client age-plugin-vaultfile is checked with (AgePluginCLITests; skipped when absent).
PYRAGE_VENV := .build/pyrage-venv
# PyPI cryptography: the independent HPKE (MLKEM768-X25519) post-quantum slots and age files are checked with (PQInteropTests).
PQ_VENV := .build/pq-venv
# The release build is scripts/build-release.sh: the Swift runtime, libsodium, libargon2, libcrypto,
# zlib and libstdc++ linked in statically, so that a start maps and relocates no shared library but libc's
# (docs/PERFORMANCE.md, "Start-up"). SHARED_LIBS=1 links those five libraries shared instead.
RELEASE := SWIFT="$(SWIFT)" SHARED_LIBS="$(SHARED_LIBS)" ./scripts/build-release.sh
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: sops-fixtures all deps test-deps print-test-packages build release test demo install uninstall deb bench bench-quick clean fuzz check-sanitizers ci portable text-order

all: build

## deps: install libsodium, libargon2, libcrypto and zlib headers (and age) when pkg-config (or PATH) cannot find them.
deps:
	@if ! pkg-config --exists libsodium libargon2 libcrypto zlib 2>/dev/null || ! command -v age-keygen >/dev/null; then \
		echo "vaultfile: installing $(APT_PACKAGES) (apt-get)"; \
		$(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PACKAGES) pkg-config; \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(RELEASE) >/dev/null

## print-test-packages: the Debian packages of the tests' outside tools (.ci/run installs them).
print-test-packages:
	@echo $(TEST_APT_PACKAGES)

## test-deps: install the outside tools of the tests (TEST_APT_PACKAGES, PyPI xeddsa, pyrage and cryptography) when missing.
test-deps:
	@missing=0; for c in $(TEST_COMMANDS); do command -v $$c >/dev/null || missing=1; done; \
	for f in $(TEST_FILES); do [ -e $$f ] || missing=1; done; \
	/usr/bin/python3 -c 'import ensurepip' 2>/dev/null || missing=1; \
	if [ $$missing = 1 ]; then \
		echo "vaultfile: installing $(TEST_APT_PACKAGES) (apt-get)"; \
		$(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(TEST_APT_PACKAGES) || true; \
	fi
	@if [ ! -x $(XEDDSA_VENV)/bin/python ] || ! $(XEDDSA_VENV)/bin/python -c 'import xeddsa' 2>/dev/null; then \
		echo "vaultfile: installing PyPI xeddsa 1.2.0 into $(XEDDSA_VENV) (the independent check of seal signatures)"; \
		{ /usr/bin/python3 -m venv $(XEDDSA_VENV) && $(XEDDSA_VENV)/bin/pip install -q xeddsa==1.2.0; } \
			|| echo "vaultfile: could not install xeddsa: SealVectorTests will say it skipped its independent check"; \
	fi
	@if [ ! -x $(PYRAGE_VENV)/bin/python ] || ! $(PYRAGE_VENV)/bin/python -c 'import pyrage.plugin' 2>/dev/null; then \
		echo "vaultfile: installing PyPI pyrage 1.4.0 into $(PYRAGE_VENV) (a second client of age-plugin-vaultfile)"; \
		{ /usr/bin/python3 -m venv $(PYRAGE_VENV) && $(PYRAGE_VENV)/bin/pip install -q pyrage==1.4.0; } \
			|| echo "vaultfile: could not install pyrage: AgePluginCLITests will say it skipped its pyrage check"; \
	fi
	@if [ ! -x $(PQ_VENV)/bin/python ] || ! $(PQ_VENV)/bin/python -c 'from cryptography.hazmat.primitives import hpke' 2>/dev/null; then \
		echo "vaultfile: installing PyPI cryptography 48.0.0 into $(PQ_VENV) (the independent HPKE of post-quantum keys)"; \
		{ /usr/bin/python3 -m venv $(PQ_VENV) && $(PQ_VENV)/bin/pip install -q cryptography==48.0.0; } \
			|| echo "vaultfile: could not install cryptography: PQInteropTests will say it skipped its independent check"; \
	fi

## test: the whole test suite: the main suite (unit, format, the CLI run as a subprocess), then
## the tests that drive outside tools (ExternalTools: git, a terminal, groff), each timed apart.
test: deps test-deps
	SHARED_LIBS="$(SHARED_LIBS)" ./Tests/make-test.sh "$(SWIFT)"

## demo: create a vault in a temporary directory, store and read a secret through a pipe, show info.
demo: deps
	bin=$$($(RELEASE)) && ./scripts/demo.sh "$$bin"

## install: the release binary, stripped, with the man page and bash, zsh and fish completions, under
## DESTDIR/PREFIX (scripts/install.sh). DEBUG_INFO=1 also keeps the debug info in PREFIX/lib/debug;
## BIN=path installs that binary instead of building the release one.
install: $(if $(BIN),,deps)
	bin="$(BIN)"; [ -n "$$bin" ] || bin=$$($(RELEASE)) || exit 1; \
		BIN="$$bin" PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" DEBUG_INFO="$(DEBUG_INFO)" ZSH_COMPLETION_DIR="$(ZSH_COMPLETION_DIR)" ./scripts/install.sh install

uninstall:
	PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" ZSH_COMPLETION_DIR="$(ZSH_COMPLETION_DIR)" ./scripts/install.sh uninstall

## deb: a .deb of the portable binary with the man page and completions, in .build-deb/ (scripts/deb.sh).
## PORTABLE=path packs that binary (CI passes the one `make portable` made) instead of building it.
deb: $(if $(PORTABLE),,portable)
	./scripts/deb.sh "$(or $(PORTABLE),.build-portable/vaultfile-portable)"

## bench: vaultfile against argon2, openssl, keepassxc-cli, ansible-vault, age and a C floor (ratios from one run, ~10 min);
## then audit --hibp against keepassxc-cli analyze --hibp on a 100-million-line file (~4.4 GB, generated once
## into $$VAULTFILE_BENCH_CACHE, default ~/.cache/vaultfile-bench; bench/audit.sh); then share of 100 MiB against
## age -e to the same recipient (bench/share.sh, issue 41); then age -d through age-plugin-vaultfile against age -d -i
## (bench/age-plugin.sh, issue 43); a signature and a listing through the agent's ssh socket against OpenSSH's
## ssh-agent holding the same key (bench/ssh_agent.sh, issue 42).
## Then git credential fill through the helper with the agent against git's own store helper
## (bench/git-credential.sh, issue 43), and get through a post-quantum identity against an X25519 one
## on the same vault (bench/pq-get.sh, issue 41).
bench: deps
	mkdir -p bench/out && ./bench/run.sh --markdown bench/out/latest.md
	./bench/audit.sh | tee bench/out/audit.txt
	./bench/share.sh | tee bench/out/share.txt
	./bench/age-plugin.sh | tee bench/out/age-plugin.txt
	./bench/ssh_agent.sh | tee bench/out/ssh_agent.txt
	./bench/git-credential.sh | tee bench/out/git-credential.txt
	./bench/pq-get.sh | tee bench/out/pq-get.txt

bench-quick: deps
	./bench/run.sh --quick
	./bench/audit.sh --quick
	./bench/share.sh --quick
	./bench/age-plugin.sh --quick
	./bench/pq-get.sh --quick

## fuzz: the libFuzzer target (ASan) for FUZZ_SECONDS (default 60), seeded from Fixtures/; fails on any crash.
## VAULTFILE_FUZZ_ONLY=record-runs fuzzes the reader of an import's runs alone.
FUZZ_SECONDS ?= 60
fuzz: deps
	./scripts/fuzz.sh $(FUZZ_SECONDS)

## check-sanitizers: AddressSanitizer over the in-process suites of parsers, corpora and fixtures (every
## reader of untrusted bytes, the format, the key files), secure memory, and the CLI suites that feed the
## binary hostile input; then ThreadSanitizer over secure memory, the KDFs, locks and the agent (the
## one binary with threads). Both run the sanitized debug build and its binary, in test processes at
## once as `make test` does (Tests/make-test.sh, VAULTFILE_TEST_SANITIZER). The other suites run in
## `make test`, and `make fuzz` runs the parsers under ASan: with every suite the sanitized run outgrew
## CI's 90 minutes (a debug ASan binary costs about a second a run, and an in-process shard of every
## library suite stalled for 15 minutes). SANITIZER_TIMEOUT bounds each test process (seconds), so a
## slow or hung test names itself within CI's time.
ASAN_SUITES := ^VaultFileTests\.(.*(Corpus|Hostile|Damage|Reader|Readers|Fixture|Protocol|Parser).*|AgeCCTVTests|AgeFileTests|BoundedReadTests|InterchangeHardeningTests|FormatSnifferTests|ProtectedKeyTests|SSHRSAKeyTests|KeyslotFormatTests|VaultCodecTests)$$|^(SecureMemoryTests|LinearRegexTests)\.|^vaultfileTests\.(DamagedCorpusCLITests|KeyCorpusCLITests|HardeningCLITests|TrustAttackCLITests|AgentSecurityCLITests)$$
TSAN_SUITES := ^(SecureMemoryTests|KDFTests)\.|^VaultFileTests\.(Agent.*|FileLockTests|AtomicFileWriterTests)$$|^vaultfileTests\.Agent
SANITIZER_TIMEOUT ?= 900
check-sanitizers: deps test-deps
	ASAN_OPTIONS=detect_leaks=0 SWIFT_BACKTRACE=enable=no VAULTFILE_TEST_TIMEOUT=$(SANITIZER_TIMEOUT) VAULTFILE_TEST_SANITIZER=address VAULTFILE_TEST_SUITES='$(ASAN_SUITES)' VAULTFILE_TEST_TOOLS_FILTER='ExternalTools/GitCLITests' ./Tests/make-test.sh "$(SWIFT)"
	VAULTFILE_SANITIZER=thread SWIFT_BACKTRACE=enable=no VAULTFILE_TEST_TIMEOUT=$(SANITIZER_TIMEOUT) VAULTFILE_TEST_SANITIZER=thread VAULTFILE_TEST_SUITES='$(TSAN_SUITES)' VAULTFILE_TEST_TOOLS_FILTER='ExternalTools/Agent' ./Tests/make-test.sh "$(SWIFT)"

## portable: a static binary for USB sticks (no libsodium, libargon2, libcrypto or zlib needed), checked with ldd, nm and selftest.
portable: deps
	./scripts/portable.sh

## text-order: runs every verb of bench/scale.py, three imports at 20,000 entries (past one record buffer) and a
## new user's first commands under callgrind and writes
## scripts/text-order.txt, the order the release link lays out code in (scripts/text-order.py; docs/PERFORMANCE.md,
## "Code layout"). Run again after a change that adds or renames much code; an old file costs memory, never correctness.
## Its own scratch folder: a .build whose objects were compiled before function sections were asked for keeps them
## (SwiftPM does not rebuild every object when only -Xswiftc flags change), and their code could not be laid out.
text-order: deps
	@command -v valgrind >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind; }
	bin=$$(LINK_MAP=.build-text-order/vaultfile.map $(RELEASE) .build-text-order) \
		&& python3 scripts/text-order.py --binary "$$bin" --map .build-text-order/vaultfile.map

## ci: the tests, the fuzzer for a bounded time and the sanitizers (.ci/run runs all but the sanitizers,
## which run before every release: their two builds outgrew CI's time).
ci: test fuzz check-sanitizers

clean:
	rm -rf .build .build-asan .build-tsan .build-fuzz .build-portable .build-deb

## sops-fixtures: rewrite Fixtures/import/sops/ (sops is not in Debian: scripts/make-sops-fixtures.py
## writes sops' format from its source, with PyPI cryptography in .build/sops-venv and the real age).
SOPS_VENV := .build/sops-venv
sops-fixtures:
	@if [ ! -x $(SOPS_VENV)/bin/python ] || ! $(SOPS_VENV)/bin/python -c 'import cryptography' 2>/dev/null; then \
		/usr/bin/python3 -m venv $(SOPS_VENV) && $(SOPS_VENV)/bin/pip install -q cryptography; fi
	$(SOPS_VENV)/bin/python scripts/make-sops-fixtures.py Fixtures/import/sops
