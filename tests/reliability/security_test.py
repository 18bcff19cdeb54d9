#!/usr/bin/env python3
"""Regression test of issue 10 items 1 and 10 (CTest label reliability).

Item 1, planted directories, files and symlinks: a second local user
(`nobody`, through setpriv) pre-creates the victim's memory-tier directory
under a world-writable sticky directory (a private stand-in for /dev/shm, and
the real /dev/shm once), with a `.free` slot that is a symlink to a file of
the victim and a forged version 999. The victim's checkpoint and restart must
fail with an error naming the directory and its owner, and the victim's file
must be unchanged. Symlinks the user's own directories hold where a part or
manifest is about to be written are replaced, never written through.

Item 10, one job per directory: while a job holds the tier directories, a
second one fails at init naming the lock file and the first one's host and
pid, and `cairn delete` refuses; once the first is SIGKILLed a new job starts.

Needs root (to become `nobody`); exits 77 (skipped) otherwise.
"""
import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile

ATTACKER = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
SECRET = "the victim's own file\n"
FAILURES = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what, flush=True)
    if not condition:
        FAILURES.append(what)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)


def as_attacker(script):
    r = run(ATTACKER + ["sh", "-ec", script])
    if r.returncode != 0:
        sys.exit(f"the attacker's setup failed: {r.stderr}")


def write_config(path, data_dir, memory_path):
    with open(path, "w") as f:
        f.write(f'[general]\ndir = "{data_dir}"\n\n[tiers.memory]\npath = "{memory_path}"\n')


def plant(root, victim_file):
    """The attacker's directory: open to all, a slot linked to the victim's
    file and a forged version 999."""
    forged = f"{root}/heat/v0000000999"
    as_attacker(f"mkdir -m 777 '{root}' '{root}/.free'\n"
                f"ln -s '{victim_file}' '{root}/.free/r000000.slot1.0'\n"
                f"mkdir -p '{forged}'\n"
                f"printf forged > '{forged}/r000000.manifest'\n"
                f"printf forged > '{forged}/r000000.part'")


def expect_refused(app, config, root, what):
    for step in (["checkpoint", "1"], ["restart"]):
        r = run([app, config] + step)
        check(r.returncode == 1, f"{what}: {step[0]} fails (exit {r.returncode})")
        check(root in r.stderr and "nobody" in r.stderr,
              f"{what}: {step[0]}'s error names '{root}' and its owner: {r.stderr.strip()}")
        check("restored" not in r.stdout, f"{what}: nothing restored from the forged version")


def test_planted_directory(app, base, shm, victim_file, what):
    config = f"{base}/{what}.toml"
    root = f"{shm}/cairn-{what}-root"
    write_config(config, f"{base}/victim/{what}", f"{shm}/cairn-{what}-{{user}}")
    plant(root, victim_file)
    expect_refused(app, config, root, what)
    with open(victim_file) as f:
        check(f.read() == SECRET, f"{what}: the victim's file is unchanged")
    check(os.path.islink(f"{root}/.free/r000000.slot1.0"), f"{what}: the planted slot is untouched")


def test_private_foreign_directory(app, base, shm):
    """A directory of another user is refused even when it is closed to all."""
    config = f"{base}/closed.toml"
    root = f"{shm}/cairn-closed-root"
    write_config(config, f"{base}/victim/closed", f"{shm}/cairn-closed-{{user}}")
    as_attacker(f"mkdir -m 700 '{root}'")
    r = run([app, config, "checkpoint", "1"])
    check(r.returncode == 1 and root in r.stderr and "nobody" in r.stderr,
          f"closed foreign directory refused: {r.stderr.strip()}")


def test_own_symlinks(app, base, shm, victim_file):
    """Symlinks in the user's own directories where version 2's manifest and
    part go: replaced by the commit's rename, never written through."""
    config = f"{base}/own.toml"
    data = f"{base}/victim/own"
    mem_root = f"{shm}/cairn-own-root"
    write_config(config, data, f"{shm}/cairn-own-{{user}}")
    r = run([app, config, "checkpoint", "1"])
    check(r.returncode == 0, f"own: checkpoint 1 succeeds: {r.stderr.strip()}")
    for root in (mem_root, f"{data}/ssd/0", f"{data}/pfs"):
        version_dir = f"{root}/heat/v0000000002"
        os.makedirs(version_dir, mode=0o700, exist_ok=True)
        for name in ("r000000.manifest", "r000000.part"):
            os.symlink(victim_file, f"{version_dir}/{name}")
    r = run([app, config, "checkpoint", "2"])
    check(r.returncode == 0, f"own: checkpoint 2 succeeds over planted links: {r.stderr.strip()}")
    with open(victim_file) as f:
        check(f.read() == SECRET, "own: the victim's file is unchanged")
    r = run([app, config, "restart"])
    check(r.returncode == 0 and r.stdout.strip() == "restored 2",
          f"own: restart restores version 2 bit-exactly: {r.stdout.strip()} {r.stderr.strip()}")


def test_second_job(app, cli, base):
    config = f"{base}/lock.toml"
    data = f"{base}/victim/lock"
    write_config(config, data, f"{base}/victim/lock-mem-{{user}}")
    holder = subprocess.Popen([app, config, "hold"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = holder.stdout.readline().strip()
        check(line == "ready", f"lock: the first job is up ({line!r})")
        who = f"host {socket.gethostname()} pid {holder.pid}"
        r = run([app, config, "checkpoint", "1"])
        check(r.returncode == 1, f"lock: a second job fails at init (exit {r.returncode})")
        check(who in r.stderr and ".lock" in r.stderr and "in use by another job" in r.stderr,
              f"lock: its error names the lock file and '{who}': {r.stderr.strip()}")
        r = run([cli, "delete", "heat", "--config", config])
        check(r.returncode != 0 and who in (r.stderr + r.stdout),
              f"lock: cairn delete refuses: {(r.stderr + r.stdout).strip()}")
    finally:
        holder.kill()  # SIGKILL: no finalize, the lock file stays behind
        holder.wait()
    check(os.path.exists(f"{data}/ssd/0/.lock"), "lock: the killed job left its lock file")
    r = run([app, config, "checkpoint", "1"])
    check(r.returncode == 0, f"lock: after the kill a new job runs: {r.stderr.strip()}")
    r = run([app, config, "restart"])
    check(r.stdout.strip() == "restored 1", f"lock: and restarts: {r.stdout.strip()}")
    check(not os.path.exists(f"{data}/ssd/0/.lock"), "lock: finalize removed its lock file")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--app", required=True)
    parser.add_argument("--cli", required=True)
    args = parser.parse_args()
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        print("skipped: needs root and setpriv to play a second user")
        return 77
    os.umask(0o077)  # what the test makes for the victim is private, as Cairn's own
    base = tempfile.mkdtemp(prefix="cairn-security-")
    # The real /dev/shm once: the attacker's directory straight in it.
    devshm = f"devshm{os.getpid()}"
    try:
        os.chmod(base, 0o755)  # the attacker must reach the stand-in below
        shm = f"{base}/shm"
        os.mkdir(shm)
        os.chmod(shm, 0o1777)  # world-writable and sticky, like /dev/shm
        os.makedirs(f"{base}/victim", mode=0o700)
        victim_file = f"{base}/victim/precious.txt"
        with open(victim_file, "w") as f:
            f.write(SECRET)
        os.chmod(victim_file, 0o600)
        test_planted_directory(args.app, base, shm, victim_file, "standin")
        test_planted_directory(args.app, base, "/dev/shm", victim_file, devshm)
        test_private_foreign_directory(args.app, base, shm)
        test_own_symlinks(args.app, base, shm, victim_file)
        test_second_job(args.app, args.cli, base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(f"/dev/shm/cairn-{devshm}-root", ignore_errors=True)
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
