"""What the experiment reports share: reading a run's metrics and the
bookkeeping lib.sh writes (timings.tsv, machine.txt), and mean ± sd."""
import json
import os
import statistics


def records(d):
    """The lines of a run's metrics.jsonl."""
    with open(os.path.join(d, "metrics.jsonl")) as f:
        return [json.loads(line) for line in f]


def evals(d, key="eval/accuracy"):
    """step -> key, at the steps that logged it."""
    return {int(r["step"]): r[key] for r in records(d) if key in r}


def train_reward(d, last=5):
    """The mean of reward/mean over a run's last steps."""
    xs = [r["reward/mean"] for r in records(d) if "reward/mean" in r]
    return statistics.mean(xs[-last:])


def ms(xs):
    """Mean and sample standard deviation (NaN for one value)."""
    return statistics.mean(xs), (statistics.stdev(xs) if len(xs) > 1 else float("nan"))


def timings(out):
    """The stamps of timings.tsv in order, and the wall time from start to end."""
    t = {}
    with open(os.path.join(out, "timings.tsv")) as f:
        for line in f:
            k, v = line.split("\t")
            t[k] = int(v)
    return t, t.get("end", max(t.values())) - t["start"]


def machine(out):
    """machine.txt as written."""
    with open(os.path.join(out, "machine.txt")) as f:
        return f.read().strip()
