#!/usr/bin/env python3
"""The MPI kill campaign (issue 10, "Campaigns to keep"; CTest label reliability).

Each trial runs kill_app on 4 ranks laid out as 2 virtual nodes and SIGKILLs
it at a random moment: every rank at once, or one rank (mpirun then takes the
others down). The moment is drawn after a random number of acknowledged
checkpoints plus a random delay, so kills land inside checkpoints, during the
background drain and between steps. Some trials also lose virtual node 1
(every node-local tier of it: memory and ssd), kill the job again while it
restarts, or run with memory-tier ECC, a [dedup] mode or cross-node
redundancy (drawn per trial, kept by all of its runs). Then the job is run to
completion and each trial asserts:
  - every kill really happened (the target process existed and died, and the
    job had not finished);
  - the final state is bit-identical to an uninterrupted run's;
  - when no node was lost, no restart resumed from a version older than the
    newest one acknowledged to the application before it.

  kill_campaign.py --app BUILD/tests/kill_app --trials N [--seed S] [--jobs J] [--keep]

--jobs trials run side by side (default 2): most of a trial's time is Open
MPI starting and tearing down its jobs, which leaves the cores idle.

Prints one line per trial, then "N passed, M failed"; exits 1 if any failed.
A failure names the trial's seed: `--seed S --trials 1` repeats it.
"""
import argparse
import concurrent.futures
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

NP = 4
RANKS_PER_NODE = 2
LOST_NODE = 1
STEPS = 20
EVERY = 2
MIB = 2
RUN_TIMEOUT = 120  # seconds; a run that takes longer is a hang


class TrialFailed(Exception):
    pass


def mpirun(app, config, trial_dir, log):
    """Starts the job; returns the Popen (its own process group)."""
    pids = os.path.join(trial_dir, "pids")
    shutil.rmtree(pids, ignore_errors=True)
    os.makedirs(pids)
    restored = os.path.join(trial_dir, "restored")
    if os.path.exists(restored):
        os.unlink(restored)  # each run reports its own restart
    # The ob1 transport: the campaign is about what a kill does to Cairn, and
    # ob1 starts a job about 0.2 s sooner than UCX (of about 0.6 s), over the
    # 200-odd jobs a CI run starts.
    cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--mca", "pml", "ob1",
           "-np", str(NP), app,
           "--steps", str(STEPS), "--every", str(EVERY), "--mib", str(MIB), "--config", config,
           "--pids", pids, "--ack", os.path.join(trial_dir, "ack"),
           "--restored", os.path.join(trial_dir, "restored"),
           "--out", os.path.join(trial_dir, "out")]
    return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def wait_until(condition, proc, what):
    """Polls condition() until true; fails if the job ends first or hangs."""
    deadline = time.monotonic() + RUN_TIMEOUT
    while not condition():
        if proc.poll() is not None:
            raise TrialFailed(f"the job ended (status {proc.returncode}) before {what}")
        if time.monotonic() > deadline:
            raise TrialFailed(f"timed out waiting for {what}")
        time.sleep(0.002)


def finish(proc, what):
    try:
        return proc.wait(timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise TrialFailed(f"{what} hung for {RUN_TIMEOUT} s")


def rank_pids(trial_dir):
    pids = {}
    for r in range(NP):
        path = os.path.join(trial_dir, "pids", f"{r}.pid")
        if os.path.exists(path):
            with open(path) as f:
                pids[r] = int(f.read())
    return pids


def acked(trial_dir):
    try:
        with open(os.path.join(trial_dir, "ack")) as f:
            return [int(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []


def read_int(path):
    with open(path) as f:
        return int(f.read())


def kill_job(proc, trial_dir, rng, whom):
    """SIGKILLs every rank or one; asserts that it happened."""
    pids = rank_pids(trial_dir)
    targets = list(pids.values()) if whom == "all" else [pids[rng.randrange(NP)]]
    killed = 0
    for pid in targets:
        try:
            os.kill(pid, signal.SIGKILL)
            killed += 1
        except ProcessLookupError:
            pass
    status = finish(proc, "the killed job")
    if killed == 0:
        raise TrialFailed("no rank was alive to be killed")
    if os.path.exists(os.path.join(trial_dir, "out")):
        raise TrialFailed("the job finished: the kill came too late")
    if status == 0:
        raise TrialFailed("the killed job exited 0")


DEDUP_MODES = ["off", "off", "local", "collective", "incremental", "collective+incremental"]
# Pages shorter than a CRC block, of no power of two, as long as one and
# longer (the regions' last pages short), with either digest kind.
DEDUP_PAGE_SIZES = [4096, 4096, 512, 3000, 65536, 1 << 20]
DEDUP_HASHES = ["xxh3-128", "xxh3-128", "sha1"]
REDUNDANCY_SCHEMES = ["none", "none", "partner", "xor"]


def draw_dedup(rng):
    """A [dedup] table's keys, drawn; {} for mode off."""
    mode = rng.choice(DEDUP_MODES)
    if mode == "off":
        return {}
    return {"mode": mode, "page_size": rng.choice(DEDUP_PAGE_SIZES),
            "hash": rng.choice(DEDUP_HASHES), "full_every": rng.choice([8, 2]),
            "probe_every": rng.choice([8, 3, 1]),
            # 1.0: every planned version saves "too little", so versions
            # written whole alternate with deduplicated ones.
            "min_saving": rng.choice([0.02, 0.02, 1.0])}


def write_config(trial_dir, shm, ecc, dedup=None, redundancy="none"):
    dedup_keys = "".join(f"{k} = {json.dumps(v)}\n" for k, v in (dedup or {}).items())
    path = os.path.join(trial_dir, "cairn.toml")
    with open(path, "w") as f:
        f.write(f"""[general]
dir = "{trial_dir}/data"
log_level = "error"
[tiers.memory]
path = "{shm}/{{node}}"
ecc = "{ecc}"
[tiers.ssd]
path = "{trial_dir}/data/ssd/{{node}}"
[tiers.pfs]
path = "{trial_dir}/data/pfs"
[topology]
ranks_per_node = {RANKS_PER_NODE}
[dedup]
{dedup_keys}[redundancy]
scheme = "{redundancy}"
""")
    return path


def lose_node(trial_dir, shm):
    """Virtual node LOST_NODE dies: all of its node-local tiers go."""
    shutil.rmtree(os.path.join(shm, str(LOST_NODE)), ignore_errors=True)
    shutil.rmtree(os.path.join(trial_dir, "data", "ssd", str(LOST_NODE)), ignore_errors=True)


def run_trial(app, root, shm_root, seed, reference):
    rng = random.Random(seed)
    trial_dir = os.path.join(root, f"t{seed}")
    shm = os.path.join(shm_root, f"t{seed}")
    os.makedirs(trial_dir)
    ecc = rng.choice(["none", "none", "normal", "strong"])
    whom = rng.choice(["all", "one"])
    node_lost = rng.random() < 0.25
    kill_restart = rng.random() < 0.3
    after = rng.randrange(1, STEPS // EVERY // 2)
    delay = rng.uniform(0, 0.02)
    dedup = draw_dedup(rng)
    redundancy = rng.choice(REDUNDANCY_SCHEMES)
    dedup_story = "/".join(str(v) for v in dedup.values()) or "off"
    story = (f"ecc={ecc} dedup={dedup_story} redundancy={redundancy} kill={whom} "
             f"after ack {after}+{delay * 1e3:.0f}ms")
    config = write_config(trial_dir, shm, ecc, dedup, redundancy)
    with open(os.path.join(trial_dir, "log"), "ab") as log:
        proc = mpirun(app, config, trial_dir, log)
        wait_until(lambda: len(acked(trial_dir)) >= after and len(rank_pids(trial_dir)) == NP,
                   proc, f"{after} acknowledged checkpoints")
        time.sleep(delay)  # where the kill lands, not synchronisation
        kill_job(proc, trial_dir, rng, whom)
        if node_lost:
            lose_node(trial_dir, shm)
            story += f", lost node {LOST_NODE}"
        if kill_restart:
            before = max(acked(trial_dir), default=-1)
            proc = mpirun(app, config, trial_dir, log)
            wait_until(lambda: len(rank_pids(trial_dir)) == NP, proc, "the restart started")
            time.sleep(rng.uniform(0, 0.05))
            kill_job(proc, trial_dir, rng, "all")
            story += ", killed in restart"
            restored = os.path.join(trial_dir, "restored")
            if not node_lost and os.path.exists(restored) and read_int(restored) < before:
                raise TrialFailed(f"{story}: the killed restart resumed from "
                                  f"{read_int(restored)}, older than acknowledged {before}")
        before = max(acked(trial_dir), default=-1)
        proc = mpirun(app, config, trial_dir, log)
        status = finish(proc, "the final run")
    if status != 0:
        raise TrialFailed(f"{story}: the final run failed (status {status}); "
                          f"see {trial_dir}/log")
    restored = read_int(os.path.join(trial_dir, "restored"))
    with open(os.path.join(trial_dir, "out")) as f:
        digest = f.read().strip()
    if digest != reference:
        raise TrialFailed(f"{story}: final state {digest} != uninterrupted {reference}")
    if not node_lost and restored < before:
        raise TrialFailed(f"{story}: resumed from {restored}, older than acknowledged {before}")
    if restored < 0 and before >= 0 and not node_lost:
        raise TrialFailed(f"{story}: no version restored although {before} was acknowledged")
    return f"{story}; resumed from {restored} (acknowledged {before})"


def reference_digest(app, root, shm_root):
    trial_dir = os.path.join(root, "reference")
    os.makedirs(trial_dir)
    config = write_config(trial_dir, os.path.join(shm_root, "reference"), "none")
    with open(os.path.join(trial_dir, "log"), "ab") as log:
        status = finish(mpirun(app, config, trial_dir, log), "the reference run")
    if status != 0:
        sys.exit(f"kill_campaign: the uninterrupted run failed; see {trial_dir}/log")
    with open(os.path.join(trial_dir, "out")) as f:
        return f.read().strip()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--app", required=True)
    p.add_argument("--trials", type=int, default=100)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--jobs", type=int, default=2, help="trials run side by side")
    p.add_argument("--keep", action="store_true", help="keep the trial directories")
    args = p.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 30)
    print(f"kill_campaign: {args.trials} trials from seed {seed}", flush=True)
    for var in [v for v in os.environ if v.startswith("CAIRN_")]:
        del os.environ[var]
    os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    root = tempfile.mkdtemp(prefix="cairn-kill-")
    shm_root = tempfile.mkdtemp(prefix="cairn-kill-", dir="/dev/shm")
    passed = failed = 0

    def trial(t):
        trial_seed = seed + t
        try:
            outcome = run_trial(args.app, root, shm_root, trial_seed, reference)
        except TrialFailed as e:
            return False, (f"trial {t} seed {trial_seed}: FAILED: {e} "
                           f"(repeat: --seed {trial_seed} --trials 1 --keep)")
        if not args.keep:
            shutil.rmtree(os.path.join(root, f"t{trial_seed}"), ignore_errors=True)
            shutil.rmtree(os.path.join(shm_root, f"t{trial_seed}"), ignore_errors=True)
        return True, f"trial {t} seed {trial_seed}: ok: {outcome}"

    try:
        reference = reference_digest(args.app, root, shm_root)
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for ok, line in pool.map(trial, range(args.trials)):
                passed += ok
                failed += not ok
                print(line, flush=True)
    finally:
        if args.keep or failed:
            print(f"kill_campaign: trial directories kept in {root} and {shm_root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
            shutil.rmtree(shm_root, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
