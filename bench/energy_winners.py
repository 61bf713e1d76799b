"""bench/energy_winners_h200.sh's table: each objective's winner, its time,
energy per launch and mean power in its tuning, and again alone beside the
default (`ktune bench`), with the energy winner against the time winner.

    python3 bench/energy_winners.py DIR NAME...

DIR/NAME.OBJ.json: `ktune tune --objective OBJ --json` (OBJ: time, energy,
edp); DIR/NAME.OBJ.bench.json: `ktune bench --objective energy --json` of
that winner (time and energy only)."""
import json
import sys


def load(path):
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return None


def seconds(c):
    return c.get("final_median_s", c["median_s"])


def cfg(c):
    return " ".join(f"{k}={v}" for k, v in c["config"].items())


def figures(c):
    """time (us), energy per launch (mJ), mean power (W) of configuration C."""
    m = c.get("measurement", {})
    if "energy_per_launch_j" not in m:
        return seconds(c) * 1e6, float("nan"), float("nan")
    # The measurement's energy is its median's; the final median (rounds) with the same power.
    return seconds(c) * 1e6, m["power_mean_w"] * seconds(c) * 1e3, m["power_mean_w"]


def pinned(bench):
    """The pinned configuration of a `ktune bench` result (not the default, unless it is)."""
    ok = [c for c in bench["configurations"] if c["status"] == "ok"]
    rest = [c for c in ok if not c.get("default")]
    return (rest or ok)[0] if ok else None


def ratio(a, b):
    return a / b if b else float("nan")


def main():
    out, names = sys.argv[1], sys.argv[2:]
    print("| kernel | objective | winner | tuned: us/launch | mJ/launch | W | alone: us/launch | mJ/launch | W |")
    print("|---|---|---|---|---|---|---|---|---|")
    notes = []
    for name in names:
        alone = {}
        for obj in ("time", "energy", "edp"):
            r = load(f"{out}/{name}.{obj}.json")
            if not r or not r.get("winner"):
                print(f"| {name} | {obj} | (no result) | | | | | | |")
                continue
            w = r["winner"]
            t, mj, watts = figures(w)
            b = load(f"{out}/{name}.{obj}.bench.json")
            p = pinned(b) if b else None
            at, amj, aw = figures(p) if p else (float("nan"),) * 3
            alone[obj] = (at, amj)
            print(f"| {name} | {obj} | {cfg(w)} | {t:.4g} | {mj:.4g} | {watts:.0f} | {at:.4g} | {amj:.4g} | {aw:.0f} |")
        if "time" in alone and "energy" in alone:
            (tt, tj), (et, ej) = alone["time"], alone["energy"]
            notes.append(f"{name}: the energy winner alone takes {ratio(et, tt):.3f}x the time winner's time "
                         f"and {ratio(ej, tj):.3f}x its energy per launch")
    print()
    for n in notes:
        print(f"- {n}")


if __name__ == "__main__":
    main()
