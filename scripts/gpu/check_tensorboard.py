#!/usr/bin/env python3
"""check_tensorboard.py [--dump] RUN_DIR — reads a troupe run's TensorBoard
event file with the tensorboard package's own reader (EventAccumulator),
independently of troupe's Go writer, and checks it against the run's
metrics.jsonl:

  * every numeric metric of every metrics.jsonl line is a scalar with the same
    tag, at the same step, with the same value (as float32; NaN and ±Inf too);
  * no tag has a step twice (a resumed run truncated its events);
  * the per-step "episodes" text summaries decode to non-empty text.

Exit status 0 when all hold, 1 with the first mismatches otherwise. Run where
the tensorboard package is installed: the Python reference environment
(scripts/pyref) or a GPU machine's python3; cmd/train's end-to-end test calls
it with one of them.

With --dump it checks nothing and prints, as one JSON object, everything
EventAccumulator read: {"scalars": {tag: [[step, float32 bits], ...]},
"texts": {tag: [{"step": step, "text": text}, ...]}, "plugins": {text tag:
the plugin its metadata names}} in the order it read them (float32 bits
as an unsigned integer, so NaN, ±Inf and -0 travel exactly).
internal/metrics' TestEventsReadByTensorBoard compares that with what it
wrote.
"""
import json
import math
import os
import struct
import sys


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def same(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b


def f32bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def dump(acc):
    from tensorboard.util import tensor_util

    tags = acc.Tags()
    out = {"scalars": {}, "texts": {}, "plugins": {}}
    for tag in tags.get("scalars", []):
        out["scalars"][tag] = [[e.step, f32bits(e.value)] for e in acc.Scalars(tag)]
    for tag in tags.get("tensors", []):
        out["texts"][tag] = [{"step": e.step, "text": tensor_util.make_ndarray(e.tensor_proto).item().decode("utf-8")}
                             for e in acc.Tensors(tag)]
        out["plugins"][tag] = acc.SummaryMetadata(tag).plugin_data.plugin_name
    print(json.dumps(out))


def main():
    args = sys.argv[1:]
    as_dump = args[:1] == ["--dump"]
    if as_dump:
        args = args[1:]
    if len(args) != 1:
        sys.exit("usage: check_tensorboard.py [--dump] RUN_DIR")
    run = args[0]
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.util import tensor_util

    acc = EventAccumulator(run, size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    if as_dump:
        dump(acc)
        return
    tags = acc.Tags()
    scalars = {t: acc.Scalars(t) for t in tags.get("scalars", [])}
    problems = []
    for tag, events in scalars.items():
        steps = [e.step for e in events]
        if len(steps) != len(set(steps)):
            problems.append(f"{tag}: a step appears twice: {steps}")
    special = {"NaN": math.nan, "Inf": math.inf, "-Inf": -math.inf}
    checked = 0
    with open(os.path.join(run, "metrics.jsonl")) as f:
        for line in f:
            if not line.strip():
                continue
            rec = json.loads(line)
            step = rec["step"]
            for key, value in rec.items():
                if key in ("step", "time"):
                    continue
                if isinstance(value, str):
                    if value not in special:
                        continue  # a label, not a metric
                    value = special[value]
                at = [e for e in scalars.get(key, []) if e.step == step]
                if len(at) != 1:
                    problems.append(f"step {step} {key}: {len(at)} scalar events, want 1")
                elif not same(at[0].value, f32(value)):
                    problems.append(f"step {step} {key}: event {at[0].value!r}, metrics.jsonl {value!r}")
                checked += 1
    texts = acc.Tensors("episodes") if "episodes" in tags.get("tensors", []) else []
    for ev in texts:
        text = tensor_util.make_ndarray(ev.tensor_proto).item()
        if not text:
            problems.append(f"episodes text at step {ev.step} is empty")
    if not texts:
        problems.append("no 'episodes' text summaries")
    print(f"check_tensorboard: {checked} metric values, {len(scalars)} tags, {len(texts)} text summaries read by EventAccumulator")
    if problems:
        for p in problems[:20]:
            print("  " + p)
        sys.exit(1)
    print("check_tensorboard: ok")


if __name__ == "__main__":
    main()
