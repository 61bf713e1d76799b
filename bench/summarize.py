#!/usr/bin/env python3
"""results.json of bench/throughput_h200.sh -> the markdown for docs/BENCHMARKS.md.

    bench/summarize.py results.json > summary.md

Definitions used in the tables:
  wall             ktune: the whole `ktune tune` process; Kernel Tuner: its
                   tune_kernel call (Python start, imports and input set-up
                   left out, in its favour); Triton: the first call of the
                   autotuned kernel (compiling and benchmarking every
                   configuration); max-autotune: Inductor's precompile plus
                   benchmark seconds (and, apart, the whole first call)
  cost per config  wall / configurations tried
  re-measured      remeasure.py's median (CUDA events, L2 flushed, 10 warm-up
                   + 50 interleaved samples): one method for every winner
  agree within 2%  ktune's winner, re-measured, is at most 2% slower than the
                   peer's, re-measured
  floor            the larger of (compile CPU seconds of all configurations /
                   cores) and (one launch of every configuration, from ktune's
                   minimum per configuration): no tuner of this space can be
                   faster without skipping configurations
"""

import json
import sys

GOAL_KT_WALL = 10      # times less wall than Kernel Tuner's brute force
GOAL_TRITON = 20       # times less cost per configuration than Triton's autotuner
GOAL_INDUCTOR = 5      # times less than max-autotune's
AGREE = 0.02           # winners within 2%
REPEAT_SPREAD = 0.01   # repeated tunings within 1%


def fmt(v, spec=".2f", unit=""):
    if v is None:
        return "n/a"
    return f"{v:{spec}}{unit}"


def ms(v):
    return fmt(v * 1e3 if v is not None else None, ".4g", " ms")


def ratio(a, b):
    return a / b if a and b else None


def cfg_text(c):
    return " ".join(f"{k}={v}" for k, v in (c or {}).items()) or "n/a"


class Results:
    def __init__(self, doc):
        self.doc = doc
        self.meta = doc.get("meta") or {}
        self.cores = self.meta.get("cores") or 1
        self.remeasured = {}
        for r in (doc.get("remeasure") or {}).get("results", []):
            for label in r.get("labels", []):
                self.remeasured[label] = r

    def re_median(self, label):
        return (self.remeasured.get(label) or {}).get("median_s")

    def ktune(self, kernel):
        run = (self.doc.get("ktune") or {}).get(kernel) or {}
        d = run.get("doc") or {}
        cfgs = d.get("configurations") or []
        tried = [c for c in cfgs if c.get("status") != "constraint"]
        wall = run.get("process_wall_s") or (d.get("timeline") or {}).get("wall_s")
        compile_cpu = sum(c.get("compile_s") or 0 for c in tried)
        one_launch = sum(c.get("min_s") or 0 for c in tried if c.get("status") == "ok")
        tl = d.get("timeline") or {}
        return {
            "ok": bool(d.get("winner")), "error": d.get("error") or (None if d else "no result"),
            "tried": len(tried), "wall": wall, "per_config": ratio(wall, len(tried)),
            "winner": (d.get("winner") or {}).get("config"), "winner_s": (d.get("winner") or {}).get("median_s"),
            "compile_cpu": compile_cpu, "one_launch": one_launch,
            "floor": max(compile_cpu / self.cores, one_launch) if tried else None,
            "timeline": tl, "sizes": d.get("sizes"),
        }

    def kt(self, kernel):
        d = (self.doc.get("kernel_tuner") or {}).get(kernel) or {}
        best = d.get("best") or {}
        return {"ok": bool(best), "error": d.get("error"), "tried": d.get("tried"), "wall": d.get("wall_s"),
                "per_config": d.get("per_config_s"), "winner": best.get("config"), "winner_s": best.get("time_s"),
                "compile": d.get("compile_s_total"), "partial": d.get("partial"), "subset": d.get("subset"),
                "space": d.get("space_size"), "version": d.get("version")}


def peers_table(R, out):
    out.append("### Same kernels, same spaces: ktune and Kernel Tuner (brute force)\n")
    out.append("| kernel | configurations | ktune wall | ktune per config | Kernel Tuner wall | KT per config "
               "| KT wall / ktune wall | ktune winner (re-measured) | KT winner (re-measured) | agree within 2% |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    verdicts = {}
    for kernel in ("elementwise", "sgemm"):
        k, p = R.ktune(kernel), R.kt(kernel)
        kr, pr = R.re_median(f"ktune {kernel}"), R.re_median(f"kernel_tuner {kernel}")
        # Kernel Tuner over a subset or cut short: its wall scaled to the whole space.
        kt_wall = p["wall"]
        note = ""
        if p["subset"] or p["partial"]:
            kt_wall = p["per_config"] * k["tried"] if p["per_config"] and k["tried"] else None
            note = f" (measured {p['tried']}, scaled)"
        wr = ratio(kt_wall, k["wall"])
        agree = kr <= pr * (1 + AGREE) if kr and pr else None
        verdicts[kernel] = (wr, agree)
        out.append(f"| {kernel} | {k['tried']} / {p['tried']} | {fmt(k['wall'], '.1f', ' s')} "
                   f"| {fmt(k['per_config'], '.3f', ' s')} | {fmt(kt_wall, '.1f', ' s')}{note} "
                   f"| {fmt(p['per_config'], '.3f', ' s')} | {fmt(wr, '.1f', 'x')} "
                   f"| {cfg_text(k['winner'])}: {ms(kr)} | {cfg_text(p['winner'])}: {ms(pr)} "
                   f"| {'yes' if agree else 'no' if agree is False else 'n/a'}"
                   f"{f' ({(kr / pr - 1) * 100:+.1f}%)' if kr and pr else ''} |")
    out.append("")
    for kernel in ("elementwise", "sgemm"):
        d = (R.doc.get("kernel_tuner") or {}).get(kernel) or {}
        if d.get("note"):
            out.append(f"- Kernel Tuner, {kernel}: {d['note']}.")
        if d.get("error"):
            out.append(f"- Kernel Tuner, {kernel}: {d['error']}")
        if d.get("lang_failures"):
            out.append(f"- Kernel Tuner, {kernel}: backends that failed first: {d['lang_failures']}")
    out.append("")
    return verdicts


def matmul_table(R, out):
    tri = (R.doc.get("triton") or {}).get("triton") or {}
    ind = (R.doc.get("triton") or {}).get("inductor") or {}
    k = R.ktune("sgemm")
    n = 4096
    shape = (R.doc.get("triton") or {}).get("shape") or {}
    flops = 2 * shape.get("M", n) * shape.get("N", n) * shape.get("K", n)

    def tflops(t):
        return fmt(flops / t / 1e12 if t else None, ".1f")

    out.append("### Matmul (fp32, 4096^3): cost per configuration\n")
    out.append("| tuner | configurations | tuning wall | per configuration | ktune's advantage per configuration "
               "| winner | winner re-measured | TFLOP/s |")
    out.append("|---|---|---|---|---|---|---|---|")
    kr = R.re_median("ktune sgemm")
    out.append(f"| ktune, sgemm.cu | {k['tried']} | {fmt(k['wall'], '.1f', ' s')} | {fmt(k['per_config'], '.3f', ' s')} "
               f"| 1x | {cfg_text(k['winner'])} | {ms(kr)} | {tflops(kr)} |")
    tri_r = ratio(tri.get("per_config_s"), k["per_config"])
    tri_re = (tri.get("remeasured") or {}).get("median_s")
    out.append(f"| Triton {tri.get('version', '')} @autotune ({tri.get('configs_list', '?')} list, "
               f"{tri.get('precision', '?')}) | {tri.get('configs', 'n/a')} | {fmt(tri.get('wall_s'), '.1f', ' s')} "
               f"| {fmt(tri.get('per_config_s'), '.3f', ' s')} | {fmt(tri_r, '.1f', 'x')} "
               f"| {cfg_text((tri.get('best') or {}).get('config'))} | {ms(tri_re)} | {tflops(tri_re)} |")
    ind_r = ratio(ind.get("per_choice_s"), k["per_config"])
    ind_re = (ind.get("remeasured") or {}).get("median_s")
    best = (ind.get("best") or {}).get("choice")
    out.append(f"| torch.compile max-autotune {ind.get('version', '')} (precompile + benchmark) "
               f"| {ind.get('n_choices', 'n/a')} | {fmt(ind.get('autotune_s'), '.2f', ' s')} "
               f"| {fmt(ind.get('per_choice_s'), '.3f', ' s')} | {fmt(ind_r, '.1f', 'x')} | {best or 'n/a'} "
               f"| {ms(ind_re)} | {tflops(ind_re)} |")
    first_r = ratio(ind.get("first_call_per_choice_s"), k["per_config"])
    out.append(f"| torch.compile max-autotune, whole first call | {ind.get('n_choices', 'n/a')} "
               f"| {fmt(ind.get('first_call_s'), '.1f', ' s')} | {fmt(ind.get('first_call_per_choice_s'), '.3f', ' s')} "
               f"| {fmt(first_r, '.1f', 'x')} | | | |")
    out.append("")
    for name, d in (("Triton", tri), ("torch.compile", ind)):
        if d.get("error") or (d.get("exit") not in (None, 0)):
            out.append(f"- {name}: {d.get('error') or 'exit ' + str(d.get('exit'))}")
        if d.get("rel_err_vs_torch_mm") is not None:
            out.append(f"- {name} result vs torch.mm: relative error {d['rel_err_vs_torch_mm']:.1e}")
    out.append("")
    return tri_r, ind_r


def floor_table(R, out):
    out.append("### Floors (ktune's own figures)\n")
    out.append("| kernel | compile CPU | / cores | one launch per configuration | floor | ktune wall | wall / floor "
               "| timeline: compile busy, device busy, device idle |")
    out.append("|---|---|---|---|---|---|---|---|")
    for kernel in ("elementwise", "sgemm"):
        k = R.ktune(kernel)
        tl = k["timeline"]
        out.append(f"| {kernel} | {fmt(k['compile_cpu'], '.1f', ' s')} | {fmt(k['compile_cpu'] / R.cores, '.2f', ' s')} "
                   f"| {fmt(k['one_launch'], '.3f', ' s')} | {fmt(k['floor'], '.2f', ' s')} "
                   f"| {fmt(k['wall'], '.2f', ' s')} | {fmt(ratio(k['wall'], k['floor']), '.1f', 'x')} "
                   f"| {fmt(tl.get('compile_busy_s'), '.1f', ' s')}, {fmt(tl.get('device_busy_s'), '.1f', ' s')}, "
                   f"{fmt(tl.get('device_idle_s'), '.1f', ' s')} |")
    out.append(f"\n{R.cores} cores.\n")


def repeat_table(R, out):
    runs = (R.doc.get("ktune") or {}).get("repeats") or []
    kernel = R.meta.get("repeat_kernel", "elementwise")
    out.append(f"### Repeated tunings: {kernel}, {len(runs)} times with --no-cache\n")
    out.append("| run | wall | winner | ktune's median | re-measured |")
    out.append("|---|---|---|---|---|")
    times = []
    for i, run in enumerate(runs, 1):
        d = run.get("doc") or {}
        w = d.get("winner") or {}
        re_t = R.re_median(f"ktune repeat {i}")
        if re_t:
            times.append(re_t)
        out.append(f"| {i} | {fmt(run.get('process_wall_s'), '.1f', ' s')} | {cfg_text(w.get('config'))} "
                   f"| {ms(w.get('median_s'))} | {ms(re_t)} |")
    spread = (max(times) / min(times) - 1) if len(times) > 1 else None
    out.append(f"\nSpread of the re-measured winners: {fmt(spread * 100 if spread is not None else None, '.2f', '%')}"
               f" (goal: within {REPEAT_SPREAD * 100:.0f}%).\n")
    return spread, len(times)


def goals(out, peers, tri_r, ind_r, spread, n_rep):
    def mark(ok):
        return "n/a" if ok is None else ("met" if ok else "NOT met")

    out.append("### Goals (issue 8)\n")
    for kernel, (wr, agree) in peers.items():
        ok = None if wr is None or agree is None else (wr >= GOAL_KT_WALL and agree)
        out.append(f"- {kernel}: {fmt(wr, '.1f', 'x')} less wall than Kernel Tuner (goal {GOAL_KT_WALL}x), "
                   f"winner within 2%: {'n/a' if agree is None else 'yes' if agree else 'no'}: {mark(ok)}")
    out.append(f"- matmul cost per configuration vs Triton's autotuner: {fmt(tri_r, '.1f', 'x')} "
               f"(goal {GOAL_TRITON}x): {mark(None if tri_r is None else tri_r >= GOAL_TRITON)}")
    out.append(f"- vs torch.compile max-autotune: {fmt(ind_r, '.1f', 'x')} "
               f"(goal {GOAL_INDUCTOR}x): {mark(None if ind_r is None else ind_r >= GOAL_INDUCTOR)}")
    out.append(f"- {n_rep} repeated tunings within 1%: "
               f"{mark(None if spread is None or n_rep < 5 else spread <= REPEAT_SPREAD)}")
    out.append("")


def summarize(doc):
    R = Results(doc)
    m = R.meta
    out = [f"## Tuning throughput: {m.get('gpu', '?')}, {m.get('date', '?')}\n",
           f"Commit {m.get('commit', '?')}, {R.cores} CPU cores, Python {m.get('python', '?')}; "
           + ", ".join(f"{k} {v}" for k, v in (m.get("versions") or {}).items()) + ".",
           f"Command: `{m.get('command', 'bench/throughput_h200.sh')}` on the H200 machine "
           "(carrying `.whl` and `.carry`).\n"]
    peers = peers_table(R, out)
    tri_r, ind_r = matmul_table(R, out)
    floor_table(R, out)
    spread, n_rep = repeat_table(R, out)
    goals(out, peers, tri_r, ind_r, spread, n_rep)
    failed = [s for s in doc.get("steps", []) if s.get("rc") not in (0, None)]
    if failed:
        out.append("Steps that did not finish cleanly: " + ", ".join(f"{s['name']} ({s['rc']})" for s in failed) + ".\n")
    rm = doc.get("remeasure") or {}
    if rm.get("method"):
        out.append(f"Re-measurement: {rm['method']}.")
    bad = [r for r in rm.get("results", []) if r.get("error") or (r.get("rel_err_vs_default") or 0) > 1e-3]
    for r in bad:
        out.append(f"- {', '.join(r.get('labels', []))}: {r.get('error') or 'relative error %.1e' % r['rel_err_vs_default']}")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    sys.stdout.write(summarize(doc))


if __name__ == "__main__":
    main()
