#!/usr/bin/env python3
"""Cross-check troupe's safetensors package against the reference library.

Needs `safetensors` and `torch` (for bf16); neither is needed at test time.
Run from the repository root where they are installed (the GPU machines):

    python3 safetensors/testdata/reference_check.py

1. Loads safetensors/testdata/go_written.safetensors (written by troupe) with
   the reference loader and checks every tensor, dtype, shape and the
   metadata against TENSORS below.
2. Writes the same tensors with the reference writer to
   safetensors/testdata/reference_written.safetensors, which
   `go test ./safetensors -run Reference` compares with troupe's output byte
   for byte. Commit that file.

TENSORS must match fixtureTensors in safetensors/fixture_test.go.
"""
import os
import sys

import torch
from safetensors import safe_open
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))

TENSORS = {
    "attn.0": torch.arange(6, dtype=torch.float32).reshape(1, 2, 3),
    "bf": torch.tensor([1.0, -2.0, 3.140625], dtype=torch.bfloat16),
    "half": torch.tensor([0.5, 65504.0], dtype=torch.float16),
    "ids": torch.tensor([[1, -2], [3, 1 << 40]], dtype=torch.int64),
    "mask": torch.tensor([True, False, True]),
    "scalar": torch.tensor(2.5, dtype=torch.float64),
    "empty": torch.zeros((0, 4), dtype=torch.float32),
    "u8": torch.tensor([0, 1, 254, 255], dtype=torch.uint8),
    "i32": torch.tensor([-1, 7], dtype=torch.int32),
    "i16": torch.tensor([-300, 300], dtype=torch.int16),
    "i8": torch.tensor([-128, 127], dtype=torch.int8),
}
METADATA = {"format": "pt"}


def check_go_written(path):
    failures = 0
    with safe_open(path, framework="pt") as f:
        if f.metadata() != METADATA:
            print(f"metadata {f.metadata()} != {METADATA}")
            failures += 1
        if sorted(f.keys()) != sorted(TENSORS):
            print(f"names {sorted(f.keys())} != {sorted(TENSORS)}")
            failures += 1
        for name, want in TENSORS.items():
            got = f.get_tensor(name)
            if got.dtype != want.dtype or got.shape != want.shape or not torch.equal(got, want):
                print(f"{name}: got {got.dtype} {tuple(got.shape)} {got}, want {want.dtype} {tuple(want.shape)} {want}")
                failures += 1
    return failures


def main():
    go_written = os.path.join(HERE, "go_written.safetensors")
    failures = check_go_written(go_written)
    print(f"reference loader read {go_written}: {failures} mismatches")
    out = os.path.join(HERE, "reference_written.safetensors")
    save_file(TENSORS, out, metadata=METADATA)
    print(f"wrote {out} ({os.path.getsize(out)} bytes); now run: go test ./safetensors -run Reference")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
