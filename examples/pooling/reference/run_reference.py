#!/usr/bin/env python3
"""Train the PyTorch reference implementation of ENFORCE (enforce-nn 1.0.4)
on the pooling case with a split of our choosing, by its own benchmark
runner and configuration, so that its test MSE and ours compare on the
same test points.

The reference's pooling split lives in a download that this project cannot
reach; this script writes KKT-HardNet's split (or a -resplit partition, as
examples/pooling draws it) into the file layout the reference's runner
reads (data/raw/pooling/Pooling_dataset_{x,y}_{train,test}.csv, relative to
a working folder), loads the reference's config_benchmarking.py with
PROBLEM = "pooling" and the options below, and calls its scripts/run_benchmark.py
main(). Nothing in the reference checkout is modified; its outputs go to
the working folder's training_output/.

    /usr/bin/python3 examples/pooling/reference/run_reference.py \\
        --reference /path/to/enforce-nn --workdir /tmp/ref-pooling \\
        [--split-csv FILE] [--runs N] [--model BOTH|MLP|ENFORCE] [--epochs E] [--threads T]

--split-csv is a file of lines "row,split" with split train or test (the
format of problems/data/kkt_hardnet/Pooling_dataset_split_kkthardnet_repo.csv,
the default); `go run ./examples/pooling -quick -resplit N -writesplit FILE
-out ""` writes the partition that -resplit N trains on. The runner prints, per run, the per-output test metrics; the
script then prints the MSE over the five outputs (original units) as our
table reports it.
"""

import argparse
import csv
import importlib.util
import json
import os
import sys
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent.parent / "problems" / "data" / "kkt_hardnet"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reference", default=os.environ.get("ENFORCE_REFERENCE"), required=False)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--split-csv", default=str(DATA / "Pooling_dataset_split_kkthardnet_repo.csv"))
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--model", default="BOTH")
    ap.add_argument("--epochs", type=int, default=0, help="0: the reference's (10,000)")
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    if not a.reference:
        print("run_reference.py: --reference (or ENFORCE_REFERENCE) names the reference checkout")
        return 0
    ref = Path(a.reference).resolve()
    try:
        import torch  # noqa: F401
        import pandas  # noqa: F401
    except ImportError as e:
        print(f"run_reference.py: {e}; install python3-torch and python3-pandas")
        return 0
    torch.set_num_threads(a.threads)

    rows = list(csv.reader(open(DATA / "Pooling_dataset.csv")))
    header, rows = rows[0], rows[1:]
    split = {"train": [], "test": []}
    for r in list(csv.reader(open(a.split_csv)))[1:]:
        split[r[1]].append(int(r[0]))
    work = Path(a.workdir).resolve()
    raw = work / "data" / "raw" / "pooling"
    raw.mkdir(parents=True, exist_ok=True)
    for name, idx in split.items():
        for part, cols in (("x", range(0, 4)), ("y", range(4, 9))):
            with open(raw / f"Pooling_dataset_{part}_{name}.csv", "w", newline="") as f:
                w = csv.writer(f)
                w.writerow([header[c] for c in cols])
                for i in idx:
                    w.writerow([rows[i][c] for c in cols])
    print(f"split: {len(split['train'])} train / {len(split['test'])} test rows from {a.split_csv}")

    # The reference's configuration with PROBLEM = "pooling", loaded in
    # place of the module so that its per-problem branches see it.
    src = (ref / "benchmark_problems" / "config_benchmarking.py").read_text()
    lines = []
    for line in src.splitlines():
        key = line.split("=")[0].strip()
        if key == "PROBLEM":
            line = 'PROBLEM = "pooling"'
        elif key == "MODEL":
            line = f'MODEL = "{a.model}"'
        elif key == "N":
            line = f"N = {a.runs}"
        elif key == "PLOT":
            line = "PLOT = False"
        lines.append(line)
    if a.epochs > 0:
        lines.append(f"EPOCHS = {a.epochs}")
    sys.path.insert(0, str(ref))
    import benchmark_problems  # noqa: F401

    cfg = types.ModuleType("benchmark_problems.config_benchmarking")
    cfg.__file__ = str(ref / "benchmark_problems" / "config_benchmarking.py")
    exec(compile("\n".join(lines), cfg.__file__, "exec"), cfg.__dict__)
    sys.modules["benchmark_problems.config_benchmarking"] = cfg
    print(f"reference configuration: EPOCHS {cfg.EPOCHS}, LEARNING_RATE {cfg.LEARNING_RATE}, BATCH_SIZE {cfg.BATCH_SIZE}, "
          f"HIDDEN_LAYERS {cfg.HIDDEN_LAYERS}, HIDDEN_NEURONS {cfg.HIDDEN_NEURONS}, INFERENCE_TOLERANCE {cfg.INFERENCE_TOLERANCE}")

    # The runner copies its configuration's text into its output from
    # this path, relative to the working folder.
    (work / "src" / "benchmark_problems").mkdir(parents=True, exist_ok=True)
    (work / "src" / "benchmark_problems" / "config_benchmarking.py").write_text("\n".join(lines) + "\n")
    os.chdir(work)
    spec = importlib.util.spec_from_file_location("run_benchmark", ref / "scripts" / "run_benchmark.py")
    rb = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rb)
    rb.main()

    # The MSE over the five outputs, as examples/pooling reports it.
    for f in sorted(work.glob("training_output/**/*_metrics_runs.csv")):
        with open(f) as fh:
            for r in csv.DictReader(fh):
                mse = [float(r[f"mse_y{k}"]) for k in range(1, 6)]
                print(json.dumps({"file": str(f.relative_to(work)), "seed": r.get("seed"),
                                  "mse_5_outputs": sum(mse) / 5, "mse_per_output": mse}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
