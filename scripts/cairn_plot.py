#!/usr/bin/env python3
"""Draws the figures of `cairn model --plot` and `cairn status --plot`.

    cairn_plot.py DATA.json OUT.png

The `cairn` command computes everything and writes it to DATA.json (its
"kind" member says which figure); this script only draws it, with
matplotlib, and writes OUT.png (through a temporary name, so a failed run
leaves no half-written PNG). docs/model.md and docs/clc.md describe the
figures. Exit status: 0 drawn, 1 bad data or OUT.png not writable,
3 matplotlib missing. Installed with the `cairn` command
(<prefix>/share/cairn/cairn_plot.py)."""
import datetime
import json
import math
import os
import sys

EXIT_MATPLOTLIB_MISSING = 3
PLACEMENT_COLORS = {"memory": "tab:blue", "ssd": "tab:orange", "skip": "tab:gray"}


def utc(seconds):
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)


def fail(message, code=1):
    print(f"cairn_plot.py: {message}", file=sys.stderr)
    sys.exit(code)


def draw_model(data, plt, matplotlib):
    devices = data["devices"]
    fig, axes = plt.subplots(len(devices), 2, figsize=(13, 4.6 * len(devices)), squeeze=False)
    fig.suptitle(data["title"])
    for row, dev in zip(axes, devices):
        ax = row[0]
        interval = dev["interval"]
        for i, curve in enumerate(interval["curves"]):
            best = i == 0
            ax.plot([t / 3600 for t in curve["t_s"]], curve["epe_w"], label=curve["label"],
                    linewidth=2.2 if best else 1.1, zorder=3 if best else 2)
            ax.plot(curve["optimum_s"] / 3600, curve["optimum_epe_w"], "o",
                    color=ax.lines[-1].get_color(), zorder=4)
        for name, style in (("young_s", ":"), ("daly_s", "--")):
            ax.axvline(interval[name] / 3600, color="black", linestyle=style, linewidth=0.8,
                       label=f"{name[:-2].capitalize()} ({interval[name] / 3600:.2f} h)")
        ax.axhline(data["app_power_w"], color="gray", linewidth=0.8,
                   label=f"W_A = {data['app_power_w']:g} W")
        # Far from the optima the curves only climb: show the region where
        # the plans differ, a few times the worst optimum's excess over W_A.
        app = data["app_power_w"]
        excess = max(c["optimum_epe_w"] for c in interval["curves"]) - app
        highest = max(max(c["epe_w"]) for c in interval["curves"] if c["epe_w"])
        ax.set_ylim(app - 0.2 * excess, min(highest, app + 4 * excess) + 0.2 * excess)
        ax.set_xscale("log")
        ax.set_xlabel("checkpoint interval T_A [h] (log)")
        ax.set_ylabel("EPE [W]")
        ax.set_title(f"{dev['device']}: EPE against the checkpoint interval")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)

        ax = row[1]
        par = dev["parallelism"]
        for op in ("write", "read"):
            setting = par[op]
            block = f", {setting['block']} blocks" if setting["block"] else ""
            other = "read" if op == "write" else "write"
            ax.plot(par["levels"], setting["epe_w"], marker=".",
                    label=f"{op} at {setting['frequency']}{block} ({other} at its optimum)")
            ax.plot(setting["best_parallelism"], setting["best_epe_w"], "o",
                    color=ax.lines[-1].get_color())
        if len(par["levels"]) > 1 and par["levels"][-1] / par["levels"][0] > 16:
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        elif len(par["levels"]) <= 16:
            ax.set_xticks(par["levels"])
        ax.set_xlabel("I/O processes")
        ax.set_ylabel("EPE at its optimal interval [W]")
        ax.set_title(f"{dev['device']}: EPE against I/O parallelism")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    return fig


def draw_status(data, plt, matplotlib):
    # Runs are hours or days apart: against wall time each would be a spike.
    # The first two panels therefore run over the checkpoint calls of all
    # runs in order, a dotted line where a run starts; the ledger, which
    # also counts drains between calls, keeps wall time.
    fig, (life, split, wear) = plt.subplots(3, 1, figsize=(11, 12))
    fig.suptitle(data["title"])
    nodes = data["nodes"]

    def mark_runs(ax, node):
        for call, start in node_run_starts(node):
            ax.axvline(call, color="gray", linestyle=":", linewidth=0.8)
            ax.annotate(utc(start).strftime("%Y-%m-%d %H:%M"), (call, 1),
                        xycoords=("data", "axes fraction"), rotation=90, fontsize=6, va="top",
                        ha="right", color="gray")

    # Past ten warranties the exact figure no longer matters; it would only
    # flatten the interesting part (around the warranty) into the axis.
    cap = 10 * data["warranty_years"]
    shown = [y for n in nodes for y in n["estimated_years"] + n["expected_years"]
             if y is not None and y <= cap]
    top = max([data["warranty_years"]] + shown) * 1.15
    for node in nodes:
        calls = range(1, len(node["time"]) + 1)
        label = f"node {node['node']}"
        on_scale = [math.nan if y is None or y > cap else y for y in node["estimated_years"]]
        life.plot(calls, on_scale, marker=".", label=f"{label}: estimated L (Eq. 2)")
        color = life.lines[-1].get_color()
        life.plot(calls, node["expected_years"], linestyle="--", color=color,
                  label=f"{label}: expected L (Eq. 1)")
        off = [c for c, y in zip(calls, node["estimated_years"]) if y is None or y > cap]
        if off:
            life.plot(off, [top * 0.97] * len(off), "^", color=color, markersize=4)
    life.axhline(data["warranty_years"], color="black", linewidth=1,
                 label=f"warranty {data['warranty_years']:g} y")
    life.set_ylim(0, top)
    life.set_xlabel("checkpoint call (all runs)")
    life.set_ylabel("projected SSD lifetime [years]")
    life.set_title(f"Lifetime projection at each checkpoint (^ at the top: estimated L "
                   f"above {cap:g} y, or infinite while the SSD is not written)")
    life.grid(True, alpha=0.3)
    life.legend(fontsize=7)

    longest = max(nodes, key=lambda n: len(n["time"])) if nodes else None
    if longest is not None and longest["time"]:
        calls = range(1, len(longest["time"]) + 1)
        for placement, color in PLACEMENT_COLORS.items():
            count, series = 0, []
            for p in longest["placement"]:
                count += p == placement
                series.append(count)
            split.step(calls, series, where="post", color=color, label=placement)
        mark_runs(life, longest)
        mark_runs(split, longest)
        split.legend(fontsize=8)
    split.set_xlabel("checkpoint call (all runs)")
    split.set_ylabel("checkpoints (cumulative)")
    split.set_title(f"Tier split (node {longest['node'] if longest else '-'}: the decision is "
                    "the same on every node)")
    split.grid(True, alpha=0.3)

    for node in nodes:
        if node["ledger_time"]:
            wear.step([utc(t) for t in node["ledger_time"]],
                      [b / 1e9 for b in node["ledger_bytes"]], where="post",
                      label=f"node {node['node']}")
    wear.set_xlabel("time (UTC)")
    wear.set_ylabel("SSD bytes written by Cairn [GB]")
    wear.set_title("Wear ledger")
    wear.grid(True, alpha=0.3)
    if wear.lines:
        wear.legend(fontsize=8)
        for label in wear.get_xticklabels():
            label.set_rotation(20)
            label.set_ha("right")
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    return fig


def node_run_starts(node):
    """(call number, run start) of the first call of every run of a node."""
    out, previous = [], None
    for call, start in enumerate(node["run_start"], 1):
        if start != previous:
            out.append((call, start))
        previous = start
    return out


def main():
    if len(sys.argv) != 3:
        fail("usage: cairn_plot.py DATA.json OUT.png")
    data_path, out = sys.argv[1], sys.argv[2]
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError as e:
        fail(f"matplotlib is not available to {sys.executable} ({e}); "
             "install it (Debian: apt-get install python3-matplotlib)", EXIT_MATPLOTLIB_MISSING)
    try:
        with open(data_path, encoding="utf-8") as f:
            data = json.load(f)
        draw = {"model": draw_model, "status": draw_status}[data["kind"]]
        fig = draw(data, plt, matplotlib)
    except (OSError, ValueError, KeyError, TypeError) as e:
        fail(f"{data_path}: cannot draw: {e!r}")
    tmp = f"{out}.tmp.{os.getpid()}.png"
    try:
        fig.savefig(tmp, dpi=110)
        os.replace(tmp, out)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        fail(f"cannot write {out}: {e.strerror or e}")


if __name__ == "__main__":
    main()
