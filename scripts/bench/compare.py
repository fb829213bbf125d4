"""compare.py — troupe against a plain eager PyTorch Qwen2 (reference.py) on
the same weights, same machine, same thread count, in interleaved rounds;
prints troupe's speed over PyTorch's for every row.

Each round runs, per model, `train bench --json` and reference.py as two
processes, alternating which goes first. Every process reports the best of
its own repetitions; a row's ratio is printed as the minimum and median over
rounds of (troupe tok/s ÷ PyTorch tok/s), and beside it each side's best.
The models are written once by `train init` (Qwen2 layout, random weights)
under .cache/bench/. Run it through scripts/bench/compare.sh.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SHAPES = {  # train init flags; tiny is init's default shape
    "tiny": [],
    "40m": ["--hidden", "512", "--layers", "8", "--heads", "8", "--kv-heads", "2", "--intermediate", "2816"],
}


def run(cmd, env):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit("compare: %s failed (%d):\n%s" % (" ".join(cmd), p.returncode, p.stderr.strip()))
    return [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")], p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--train", default=os.path.join(ROOT, "bin", "train"))
    ap.add_argument("--python", required=True, help="the interpreter whose torch is the reference")
    ap.add_argument("--models", default="tiny,40m")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=3, help="repetitions inside each process (best is kept)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", default="1,8,32")
    ap.add_argument("--prompt", type=int, default=64)
    ap.add_argument("--new", type=int, default=32)
    ap.add_argument("--update", default="8x256", help="update rows x tokens (empty: none)")
    ap.add_argument("--json", help="also write every measurement to this file")
    a = ap.parse_args()

    env = dict(os.environ, TROUPE_THREADS=str(a.threads), OMP_NUM_THREADS=str(a.threads),
               OPENBLAS_NUM_THREADS=str(a.threads), MKL_NUM_THREADS=str(a.threads))
    tv, _ = subprocess.run([a.train, "version"], env=env, stdout=subprocess.PIPE, text=True).stdout, None
    pv = subprocess.run([a.python, "-c", "import torch,sys; print(torch.__version__, torch.__file__, sys.version.split()[0])"],
                        env=env, stdout=subprocess.PIPE, text=True, cwd="/").stdout.strip()
    libtorch = next((l.split()[1] for l in tv.splitlines() if l.startswith("libtorch")), "?")
    print("troupe: %s" % " | ".join(l for l in tv.splitlines()[:2]))
    print("pytorch: torch %s (%s), %s" % (pv.split()[0] if pv else "?", a.python, pv))
    # Debian's python3-torch calls itself 1.13.0a0: compare the release numbers
    same = bool(pv) and re.match(r"\d+\.\d+\.\d+", pv.split()[0]).group(0) == libtorch
    print("libtorch: %s" % ("the same version on both sides (%s)" % libtorch if same else
                            "DIFFERENT builds: troupe links libtorch %s, the PyTorch side runs torch %s — "
                            "kernels and BLAS differ; pass --python /usr/bin/python3 with Debian's python3-torch "
                            "for a like-for-like run" % (libtorch, pv.split()[0] if pv else "?")))
    print("threads: %d intra-op each; %d rounds, interleaved; %d repetitions per process; prompt %d, new %d, update %s"
          % (a.threads, a.rounds, a.reps, a.prompt, a.new, a.update or "none"))

    common = ["--batch", a.batch, "--prompt", str(a.prompt), "--new", str(a.new), "--reps", str(a.reps)]
    if a.update:
        r, t = a.update.split("x")
        common += ["--update-rows", r, "--update-len", t]
    else:
        common += ["--update-rows", "0"]
    meas = {}  # (model, phase, batch) -> {"troupe": [...], "torch": [...]}
    for name in a.models.split(","):
        d = os.path.join(ROOT, ".cache", "bench", name)
        if not os.path.exists(os.path.join(d, "model.safetensors")):
            run([a.train, "init", d, "--family", "qwen2", "--force"] + SHAPES[name], env)
    for rnd in range(a.rounds):
        for name in a.models.split(","):
            d = os.path.join(ROOT, ".cache", "bench", name)
            sides = [("troupe", [a.train, "bench", "--model", d, "--json", "--cpu-kernels"] + common),
                     ("torch", [a.python, os.path.join(HERE, "reference.py"), "--model", d, "--threads", str(a.threads)] + common)]
            if rnd % 2:
                sides.reverse()
            for side, cmd in sides:
                rows, _ = run(cmd, env)
                for r in rows:
                    meas.setdefault((name, r["phase"], r["batch"]), {"troupe": [], "torch": []})[side].append(r["tok_s"])
                    print("round %d %s %s %s %d: %.1f tok/s" % (rnd + 1, side, name, r["phase"], r["batch"], r["tok_s"]),
                          file=sys.stderr, flush=True)
        print("round %d of %d done" % (rnd + 1, a.rounds), file=sys.stderr)

    print()
    print("%-6s %-8s %5s %12s %12s %14s %8s" % ("model", "phase", "batch", "troupe tok/s", "torch tok/s", "ratio min/med", "best"))
    worst = None
    for (name, phase, batch), m in meas.items():
        # a round whose decode was not measurable on either side (0 tok/s: a
        # busy machine made N tokens no slower than 1) gives no ratio
        ratios = [x / y for x, y in zip(m["troupe"], m["torch"]) if x > 0 and y > 0]
        if not ratios:
            print("%-6s %-8s %5d   not measured in any round (machine too busy; raise --reps)" % (name, phase, batch))
            continue
        lo, med = min(ratios), statistics.median(ratios)
        if phase != "update":
            worst = lo if worst is None else min(worst, lo)
        print("%-6s %-8s %5d %12.0f %12.0f %7.2f/%-6.2f %8.2f  (%d of %d rounds)" % (
            name, phase, batch, max(m["troupe"]), max(m["torch"]), lo, med, max(m["troupe"]) / max(m["torch"]),
            len(ratios), len(m["troupe"])))
    print()
    print("ratio = troupe tok/s ÷ PyTorch tok/s per round (>1: troupe faster); best = best ÷ best")
    if worst is not None:
        print("lowest decode/prefill ratio: %.2f" % worst)
    if a.json:
        with open(a.json, "w") as f:
            json.dump([{"model": k[0], "phase": k[1], "batch": k[2], **v} for k, v in meas.items()], f, indent=1)


if __name__ == "__main__":
    main()
