"""The agent's rows of bench/run.py (issue 28): `get` with the agent holding the key, against the same
`get` with the password, `pass show` with a warm gpg-agent, and `vaultfile --version`.

Every command runs as a whole process, interleaved with the others (run.py's `measure`).
"""
import os
import shutil
import subprocess

DEVNULL = subprocess.DEVNULL


def setup_pass(work, secret):
    """A password store with one entry under a throwaway GNUPGHOME, gpg-agent warmed; None without pass."""
    if not shutil.which("pass"):
        subprocess.run(["apt-get", "install", "-y", "-qq", "pass"], stdout=DEVNULL, stderr=DEVNULL)
    if not shutil.which("pass") or not shutil.which("gpg"):
        return None
    home = f"{work}/gnupg"
    os.makedirs(home, mode=0o700, exist_ok=True)
    env = dict(os.environ, GNUPGHOME=home, PASSWORD_STORE_DIR=f"{work}/pass-store")
    steps = [
        (["gpg", "--batch", "--passphrase", "", "--quick-gen-key", "bench@vaultfile.invalid", "default", "default", "never"], None),
        (["pass", "init", "bench@vaultfile.invalid"], None),
        (["pass", "insert", "-m", "service/entry"], secret.encode() + b"\n"),
        (["pass", "show", "service/entry"], None),  # starts gpg-agent: the rows measure it warm
    ]
    for command, stdin in steps:
        if subprocess.run(command, input=stdin, env=env, stdout=DEVNULL, stderr=DEVNULL).returncode != 0:
            return None
    return env


def section(out, measure, ms, vf, password_file, work, make_vaultfile, records, default_kdf, sizes):
    """Prints the section and returns {(label, n): seconds} for the targets."""
    agent_env = {"VAULTFILE_AGENT_SOCK": f"{work}/agent/agent.sock"}
    no_agent_env = {"VAULTFILE_AGENT_SOCK": f"{work}/no-agent/agent.sock"}
    gpg_env = setup_pass(work, "benchmark secret")
    out("## The agent: get with the key held (issue 28)")
    out()
    out("`vaultfile unlock --timeout 0` once, then `get` with no password source; against the same `get` reading the "
        "password (no agent socket: the KDF runs), `pass show` with a warm gpg-agent (one entry, a key without "
        "passphrase), and `vaultfile --version`. Default KDF (Argon2id 64 MiB t=3 p=4).")
    out()
    out("| entries | agent get | password get | agent ÷ password | pass show | --version | agent ÷ --version |")
    out("|---:|---:|---:|---:|---:|---:|---:|")
    results = {}
    try:
        for n in (sizes[0], sizes[-1]):
            entries = records(n)
            middle = entries[n // 2][0]
            path = f"{work}/agent-{n}.vault"
            make_vaultfile(path, entries, default_kdf)
            subprocess.run([vf, "unlock", "--timeout", "0", "--vault", path, "--password-file", password_file],
                           env=dict(os.environ, **agent_env), check=True, stdout=DEVNULL, stderr=DEVNULL)
            tools = {
                "agent": lambda run: ([vf, "get", middle, "--vault", path], None, agent_env),
                "password": lambda run: ([vf, "get", middle, "--vault", path, "--password-file", password_file], None, no_agent_env),
                "version": lambda run: ([vf, "--version"], None, None),
            }
            if gpg_env:
                tools["pass"] = lambda run: (["pass", "show", "service/entry"], None, gpg_env)
            medians = measure(tools, runs=15)
            results.update({(label, n): seconds for label, seconds in medians.items()})
            passed = ms(medians["pass"]) if gpg_env else "not installed"
            out(f"| {n:,} | {ms(medians['agent'])} | {ms(medians['password'])} | {medians['agent'] / medians['password']:.3f}× "
                f"| {passed} | {ms(medians['version'])} | {medians['agent'] / medians['version']:.2f}× |")
    finally:
        subprocess.run([vf, "agent", "stop"], env=dict(os.environ, **agent_env), stdout=DEVNULL, stderr=DEVNULL)
        if gpg_env:
            subprocess.run(["gpgconf", "--kill", "gpg-agent"], env=gpg_env, stdout=DEVNULL, stderr=DEVNULL)
    out()
    return results


def checks(results, sizes):
    """The targets of issue 28: (label, met, figure)."""
    n = sizes[0]
    agent, password, version = results[("agent", n)], results[("password", n)], results[("version", n)]
    return [
        (f"agent get of {n:,} ≤ 1.5× vaultfile --version", agent / version <= 1.5, f"{agent / version:.2f}×"),
        (f"agent get of {n:,} ≤ 0.1× the same get with the password", agent / password <= 0.1, f"{agent / password:.3f}×"),
    ]
