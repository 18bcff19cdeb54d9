#!/usr/bin/env python3
"""Kill-and-restart check of a checkpointed MPI program (the bindings' tests).

Runs the program three times under mpirun, each run in the same fresh Cairn
data directory except the first:
  1. uninterrupted, into its own data directory: the reference output;
  2. SIGKILLed (the whole process group, every rank at once) as soon as rank 0
     prints the line "step K checkpointed" — the kill is synchronised on the
     program's output, not on a timer;
  3. run again to the end: it must say it resumed from version K or later,
     checkpoint again (the kill came before the end), and its output file
     must equal the reference byte for byte.

  kill_restart.py --np N --kill-at K -- PROGRAM ARGS...

PROGRAM ARGS get `--config FILE --out FILE` appended. Prints
"kill_restart: 1 passed, 0 failed" or the reason it failed (exit 1).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

RUN_TIMEOUT = 120  # seconds; a run that takes longer is a hang
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe"]


class CheckFailed(Exception):
    pass


def write_config(directory: str) -> str:
    """A configuration whose tiers all live under directory (memory tier included)."""
    path = os.path.join(directory, "cairn.toml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(f'[general]\ndir = "{directory}/data"\nlog_level = "error"\n'
                f'[tiers.memory]\npath = "{directory}/shm/{{node}}"\n')
    return path


def command(args: argparse.Namespace, directory: str) -> list[str]:
    return (MPIRUN + ["-np", str(args.np)] + args.program
            + ["--config", os.path.join(directory, "cairn.toml"),
               "--out", os.path.join(directory, "out.bin")])


def run_to_end(args: argparse.Namespace, directory: str) -> str:
    done = subprocess.run(command(args, directory), capture_output=True, text=True,
                          timeout=RUN_TIMEOUT)
    if done.returncode != 0:
        raise CheckFailed(f"{' '.join(command(args, directory))} exited {done.returncode}:\n"
                          f"{done.stdout}{done.stderr}")
    return done.stdout


def session_members(session: int) -> list[int]:
    """The processes of a session (every rank of the job, whatever their process group)."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        if int(fields[3]) == session and fields[0] != "Z":
            members.append(int(entry))
    return members


def kill_session(session: int) -> None:
    """SIGKILLs every process of the session and returns once none is left, so
    that the next run finds the tiers free (Cairn locks them per job)."""
    deadline = time.monotonic() + RUN_TIMEOUT
    while members := session_members(session):
        for pid in members:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if time.monotonic() > deadline:
            raise CheckFailed(f"processes {members} outlived SIGKILL")
        time.sleep(0.01)  # polls for the processes to be gone, a condition, not a delay


def run_and_kill(args: argparse.Namespace, directory: str) -> None:
    """Starts the job and SIGKILLs every process of it once step kill_at is checkpointed."""
    trigger = f"step {args.kill_at} checkpointed"
    job = subprocess.Popen(command(args, directory), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, start_new_session=True)
    seen = []
    for line in job.stdout:
        seen.append(line)
        if line.strip() == trigger:
            kill_session(job.pid)
            break
    job.stdout.close()
    status = job.wait(timeout=RUN_TIMEOUT)
    if seen and seen[-1].strip() == trigger and status == -signal.SIGKILL:
        return
    raise CheckFailed(f"the job was not killed at '{trigger}' (exit {status}):\n{''.join(seen)}")


def check(args: argparse.Namespace, root: str) -> str:
    reference, interrupted = os.path.join(root, "reference"), os.path.join(root, "interrupted")
    for directory in (reference, interrupted):
        os.makedirs(directory)
        write_config(directory)
    run_to_end(args, reference)
    run_and_kill(args, interrupted)
    output = run_to_end(args, interrupted)
    resumed = re.search(r"resumed from version (\d+)", output)
    if resumed is None or int(resumed.group(1)) < args.kill_at:
        raise CheckFailed(f"the restarted job did not resume from version >= {args.kill_at}:\n"
                          f"{output}")
    if "checkpointed" not in output:
        raise CheckFailed("the kill came after the last checkpoint: the restarted job had "
                          f"nothing left to do (give the program more steps):\n{output}")
    with open(os.path.join(reference, "out.bin"), "rb") as f:
        expected = f.read()
    with open(os.path.join(interrupted, "out.bin"), "rb") as f:
        restarted = f.read()
    if not expected or restarted != expected:
        raise CheckFailed(f"the restarted output ({len(restarted)} bytes) differs from the "
                          f"uninterrupted run's ({len(expected)} bytes)")
    return f"resumed from version {resumed.group(1)}, {len(expected)} output bytes identical"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--np", type=int, default=4)
    parser.add_argument("--kill-at", type=int, required=True,
                        help="kill when rank 0 prints 'step K checkpointed'")
    parser.add_argument("program", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.program[:1] == ["--"]:
        args.program = args.program[1:]
    with tempfile.TemporaryDirectory(prefix="cairn-kill-restart-") as root:
        try:
            story = check(args, root)
        except (CheckFailed, subprocess.TimeoutExpired) as failure:
            print(f"kill_restart: {' '.join(args.program)}: {failure}", file=sys.stderr)
            print("kill_restart: 0 passed, 1 failed")
            return 1
    print(f"kill_restart: {' '.join(args.program)}: {story}")
    print("kill_restart: 1 passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
