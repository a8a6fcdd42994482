#!/usr/bin/env python3
"""Time the PyTorch reference (enforce-nn) and this package on the same work
items and the same instances, alternating round by round.

Usage (from anywhere in the repository):

    python3 examples/bench/reference/compare.py --reference PATH [--rounds 3]
        [--items a,b,...] [--threads 2] [--scale 1] [--inner 3] [--budget S] [--markdown]

PATH is a checkout (or an unpacked release) of the reference, the folder that
holds enforce/ and benchmark_problems/; the environment variable
ENFORCE_REFERENCE may name it instead. The script needs torch and numpy for
the Python it runs on and the go command for ours. When torch, numpy or the
reference is missing it says so and exits with status 0: nothing else in the
repository depends on it.

What it does:

 1. builds examples/bench into a temporary folder and runs it with
    -instances, which writes our instances and inputs (manifest.json and
    little-endian float64 arrays; see writeInstances in items.go), so that
    both sides time the same data;
 2. starts that binary with -items, which answers each work-item name
    written to its stdin with the time of one request (a JSON line);
 3. builds the reference's objects on the same data, in float32 as the
    reference runs, on --threads torch threads (torch.set_num_threads);
 4. runs every item once on each side untimed (warm-up), then --rounds
    rounds in which both sides time the item one after the other, the order
    swapped every round (no new round once --budget seconds have passed on
    the item);
 5. prints per item the reference's time and ours (median over the rounds,
    with min / median / max), the ratio of the medians with the range of
    the per-round ratios, the load average before and after the item, and a
    header with torch's version, threads and BLAS, our commit, GOMAXPROCS and
    the machine. --markdown prints the table as Markdown as well.

The reference is timed through its own classes (ENFORCE, Trainer and the
NonconvexProgram / NonlinearProgram of its parametric-optimisation
benchmark, with its analytic Jacobians), configured as its benchmark
configuration configures the nonconvex problems; see README.md next to this
file for what each item times on each side.
"""

import argparse
import contextlib
import io
import json
import os
import pickle
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


def missing(msg):
    """Say why nothing is measured and exit with status 0."""
    print(f"compare.py: {msg}; nothing measured.")
    sys.exit(0)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reference", default=os.environ.get("ENFORCE_REFERENCE", ""),
                   help="the reference's checkout (default: $ENFORCE_REFERENCE)")
    p.add_argument("--rounds", type=int, default=3, help="timed rounds per item (default 3)")
    p.add_argument("--items", default="", help="comma-separated items (default: all our side lists)")
    p.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    p.add_argument("--scale", type=int, default=1,
                   help="divide batches and data sets by this on both sides (default 1; >1 for a smoke test)")
    p.add_argument("--inner", type=int, default=3,
                   help="timings per round of the short items on both sides, best kept (default 3)")
    p.add_argument("--budget", type=float, default=0,
                   help="seconds per item after which no further round starts (default 0: no limit; "
                        "at least one round always runs)")
    p.add_argument("--go-bin", default="", help="a built examples/bench to use instead of building one")
    p.add_argument("--omp-wait-policy", default="passive",
                   help="OMP_WAIT_POLICY for torch's OpenMP threads, set before torch loads unless the environment "
                        "sets it (default passive; \"\" keeps libgomp's default, active spinning, which on a loaded "
                        "machine makes 2-thread torch up to 100× slower)")
    p.add_argument("--settle", type=float, default=0.3,
                   help="seconds to sleep before each timed request of either side (default 0.3; 0: back to back), "
                        "so that neither side starts while the other's threads spin: OpenBLAS's workers busy-wait for "
                        "about 0.1 s after each call (openblas_spin.py measures it), which took one of our two cores "
                        "whenever our side was timed right after the reference's")
    p.add_argument("--markdown", action="store_true", help="print the table as Markdown too")
    return p.parse_args()


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "n/a"


def git(*args):
    try:
        return subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def blas_libraries():
    """The BLAS libraries this process has loaded, from /proc/self/maps."""
    libs = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1] if len(line.split()) >= 6 else ""
                base = os.path.basename(path)
                if any(k in base for k in ("blas", "mkl", "lapack")):
                    libs.add(os.path.realpath(path))
    except OSError:
        pass
    return sorted(libs)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


class Ours:
    """Our side: examples/bench -items as a subprocess."""

    def __init__(self, binary, scale, inner):
        self.proc = subprocess.Popen([binary, "-items", "-scale", str(scale), "-inner", str(inner)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.header = json.loads(self.proc.stdout.readline())

    def run(self, item):
        self.proc.stdin.write(item + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"our side ended while answering {item}")
        r = json.loads(line)
        if r.get("error"):
            raise RuntimeError(f"our side, {item}: {r['error']}")
        return r["sec"], r.get("note", "")

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def build_ours(tmp):
    binary = os.path.join(tmp, "bench")
    subprocess.run(["go", "build", "-o", binary, "./examples/bench"], cwd=REPO, check=True)
    return binary


def load_instances(folder, np):
    with open(os.path.join(folder, "manifest.json")) as f:
        manifest = json.load(f)
    arrays = {}
    for name, info in manifest["arrays"].items():
        a = np.fromfile(os.path.join(folder, info["file"]), dtype="<f8")
        arrays[name] = a.reshape(info["shape"])
    return arrays


class Reference:
    """The reference's side: its classes on our data, float32."""

    def __init__(self, ref, arrays, tmp, torch, np, inner):
        sys.path.insert(0, ref)
        from enforce.core import ENFORCE, ENFORCEConfig  # noqa: E402
        from enforce.engines.train import Trainer, TrainingConfig  # noqa: E402
        from benchmark_problems.parametric_optimization.opt_problem import (  # noqa: E402
            NonconvexProgram, NonlinearProgram)
        from benchmark_problems.parametric_optimization.ssl_loss import SSLConfig, SSLLoss  # noqa: E402

        self.ENFORCE, self.ENFORCEConfig = ENFORCE, ENFORCEConfig
        self.Trainer, self.TrainingConfig = Trainer, TrainingConfig
        self.SSLConfig, self.SSLLoss = SSLConfig, SSLLoss
        self.torch, self.np, self.a, self.tmp, self.inner = torch, np, arrays, tmp, inner
        self.programs = {}
        # The reference's programs read their parameters from a pickle of
        # torch tensors: write ours in that layout.
        for prefix in ("lin", "quad", "step100", "step200"):
            params = self._params(prefix)
            path = os.path.join(tmp, prefix + ".pkl")
            with open(path, "wb") as f:
                pickle.dump(params, f)
            self.programs[prefix] = (NonconvexProgram if prefix == "lin" else NonlinearProgram)(params_path=path)
        self.cache = {}

    def _t(self, a):
        return self.torch.tensor(self.np.asarray(a), dtype=self.torch.float32)

    def _params(self, prefix):
        a, t = self.a, self._t
        q = a[prefix + ".Q"]
        params = {"Q": t(self.np.diag(q)), "p": t(a[prefix + ".P"])}
        if prefix == "lin":
            params["c"] = t(a["lin.C"])
        else:
            params["A"] = [t(m) for m in a[prefix + ".A"]]
            params["c"] = [t(r) for r in a[prefix + ".C"]]
            params["d"] = [t(v) for v in a[prefix + ".D"]]
        return params

    def _model(self, prefix, x_train, constrained):
        """A fresh model as the reference's benchmark builds one for the
        nonconvex problems (2×200 ReLU, W = I, tolerances 1e-3, adaptive
        activation, unsupervised objective loss, analytic Jacobian), with
        our inputs' training mean and standard deviation as its input
        scaling and the identity as its output scaling (we have no
        labels)."""
        torch = self.torch
        prog = self.programs[prefix]
        nc, no = prog._c.shape[0], prog._p.shape[0]
        xs = self._t(x_train)
        scaling_in = (xs.mean(dim=0), xs.std(dim=0, unbiased=False))
        scaling_out = (torch.zeros(no), torch.ones(no))
        cfg = self.ENFORCEConfig(
            input_neurons=nc, hidden_neurons=200, output_neurons=no, hidden_layers=2,
            training_tolerance=1e-3, inference_tolerance=1e-3, max_it=100, epoch_start_hard_constrained=0,
            ada_np_auto_activation=True, ift_backward=False, regularise_gram=False, supervised=False,
            soft_constrained=False, weight_loss_displacement=0.5, weight_loss_soft=0.0, random_seed=42)
        ssl = self.SSLLoss(config=self.SSLConfig(soft_constrained=False, weight_loss_soft=0.0), opt_prob=prog)
        model = self.ENFORCE(scaling_input=scaling_in, scaling_output=scaling_out, c=prog.eq_constraints,
                             config=cfg, constrained=constrained, weighting_option=1, ssl_loss=ssl,
                             jac=prog.jacobian)
        return model

    def _scaled(self, model, x):
        return (self._t(x) - model.mean_input) / model.std_input

    def _best(self, f):
        best = float("inf")
        for _ in range(self.inner):
            t0 = time.perf_counter()
            f()
            best = min(best, time.perf_counter() - t0)
        return best

    def prepare(self, item):
        """Return a function that runs the item once and returns (seconds, note)."""
        a, torch = self.a, self.torch
        if item.startswith("np-step-"):
            prefix = "step200" if "200-150" in item else "step100"
            model = self._model(prefix, a[prefix + ".x"], True)
            x = self._scaled(model, a[prefix + ".x"])
            y = self._t(a[prefix + ".y"])  # output scaling is the identity

            def step():
                # One pass of the body of the reference's ada_np loop:
                # Jacobian, projection, residual at the new point.
                with torch.no_grad():
                    model.compute_dc_dy(x, y)
                    y1 = model.project(x, y)
                    xu, yu = model.unscale(x, y1)
                    model.compute_residual(model.c(x=xu, y=yu), "max")

            return lambda: (self._best(step), f"one ada_np iteration (Jacobian, project, residual), no_grad, best of {self.inner}")
        if item == "mlp-forward-833":
            model = self._model("lin", a["lin.train"], False)
            x = self._scaled(model, a["lin.test"])

            def fwd():
                with torch.no_grad():
                    model.forward(x)

            return lambda: (self._best(fwd), f"model.forward, no_grad, best of {self.inner}")
        if item in ("mlp-epoch", "enforce-epoch-linear", "enforce-epoch-quadratic"):
            prefix = "quad" if item.endswith("quadratic") else "lin"
            constrained = item != "mlp-epoch"
            xtr = a[prefix + ".train"]
            no = a[prefix + ".Q"].shape[0]

            def epoch():
                model = self._model(prefix, xtr, constrained)
                x = self._scaled(model, xtr)
                y = torch.zeros(x.shape[0], no)  # no labels: the loss is the objective
                trainer = self.Trainer(model, self.TrainingConfig(batch_size=200, epochs=1, learning_rate=1e-4,
                                                                  random_seed=42))
                with contextlib.redirect_stdout(io.StringIO()):
                    t0 = time.perf_counter()
                    trainer.fit(x, y)
                    sec = time.perf_counter() - t0
                note = f"Trainer.fit, 1 epoch, fresh model, {x.shape[0]} inputs"
                if constrained:
                    note += f", mean projection iterations {model.losses[-1]['projection_iterations']:.2f}"
                return sec, note

            return epoch
        if item == "enforce-infer-quadratic-833":
            model = self._model("quad", a["quad.train"], True)
            model.eval()
            x = self._scaled(model, a["quad.test"])
            its = []

            def infer():
                with contextlib.redirect_stdout(io.StringIO()):
                    _, _, it = model.predict(x)
                its.append(it)

            return lambda: (self._best(infer), f"model.predict (as its Evaluator), untrained, iterations {its[-1]}, best of {self.inner}")
        raise ValueError(f"no reference for item {item!r}")


def ratio(ref, ours):
    """ref/ours, or inf when our time is not positive (a step item whose
    T(3) − T(1) was lost in timing noise)."""
    return ref / ours if ours > 0 else float("inf")


def summary(xs):
    return min(xs), statistics.median(xs), max(xs)


def fmt(sec):
    if sec >= 1:
        return f"{sec:.2f} s"
    if sec >= 1e-3:
        return f"{sec * 1e3:.2f} ms"
    return f"{sec * 1e6:.1f} µs"


def main():
    args = parse_args()
    if args.omp_wait_policy and "OMP_WAIT_POLICY" not in os.environ:
        os.environ["OMP_WAIT_POLICY"] = args.omp_wait_policy  # read by libgomp when torch loads it
    try:
        import numpy as np
        import torch
    except ImportError as e:
        missing(f"cannot import torch and numpy with {sys.executable} ({e})")
    ref = os.path.abspath(args.reference) if args.reference else ""
    if not ref or not os.path.isfile(os.path.join(ref, "enforce", "core", "model.py")):
        missing("no reference checkout (give --reference PATH or set ENFORCE_REFERENCE to the folder holding "
                "enforce/core/model.py)")
    if args.rounds < 1 or args.scale < 1 or args.inner < 1 or args.threads < 1 or not args.settle >= 0:
        sys.exit("compare.py: --rounds, --scale, --inner and --threads must be at least 1, --settle not negative")
    torch.set_num_threads(args.threads)

    with tempfile.TemporaryDirectory(prefix="enforce-compare-") as tmp:
        binary = args.go_bin or build_ours(tmp)
        inst = os.path.join(tmp, "instances")
        subprocess.run([binary, "-instances", inst, "-scale", str(args.scale)], check=True)
        arrays = load_instances(inst, np)
        ours = Ours(binary, args.scale, args.inner)
        items = [s for s in args.items.split(",") if s] or ours.header["items"]
        reference = Reference(ref, arrays, tmp, torch, np, args.inner)
        rows = []
        try:
            for item in items:
                load_before = loadavg()
                ref_run = reference.prepare(item)
                ref_run()  # warm-up
                ours.run(item)  # prepares and warms up our side
                ref_t, our_t, ratios = [], [], []
                ref_note = our_note = ""
                started = time.perf_counter()
                for r in range(args.rounds):
                    if r > 0 and args.budget > 0 and time.perf_counter() - started > args.budget:
                        break
                    sides = ["ref", "ours"] if r % 2 == 0 else ["ours", "ref"]
                    got = {}
                    for side in sides:
                        if args.settle > 0:
                            time.sleep(args.settle)
                        got[side] = ref_run() if side == "ref" else ours.run(item)
                    (rt, ref_note), (ot, our_note) = got["ref"], got["ours"]
                    ref_t.append(rt)
                    our_t.append(ot)
                    ratios.append(ratio(rt, ot))
                rows.append({"item": item, "rounds": len(ref_t), "ref": summary(ref_t), "ours": summary(our_t), "ratios": summary(ratios),
                             "ratio": ratio(statistics.median(ref_t), statistics.median(our_t)),
                             "load": (load_before, loadavg()), "ref_note": ref_note, "our_note": our_note})
                r = rows[-1]
                print(f"done: {item}: reference {fmt(r['ref'][1])}, ours {fmt(r['ours'][1])}, ratio {r['ratio']:.2f}× "
                      f"({len(ref_t)} rounds, load {r['load'][0]} → {r['load'][1]})", file=sys.stderr, flush=True)
        finally:
            ours.close()

    h = ours.header
    commit = git("rev-parse", "--short=12", "HEAD")
    if git("status", "--porcelain", "--untracked-files=no"):
        commit += " (with uncommitted changes)"
    blas_info = re.findall(r"\bBLAS_INFO=(\w+)", torch.__config__.show())
    print(f"date: {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}; machine: {cpu_model()}, {os.cpu_count()} CPUs")
    print(f"reference: enforce-nn at {ref}; torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"BLAS_INFO={blas_info[0] if blas_info else 'n/a'}, BLAS libraries loaded: {', '.join(blas_libraries()) or 'none found'}; "
          f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '(libgomp default)')}")
    print(f"ours: commit {commit or 'unknown'}; GOMAXPROCS {h['gomaxprocs']}; {h['go']}; BLAS: {h['blas']}")
    budget = f", budget {args.budget:g} s per item" if args.budget > 0 else ""
    settle = f", {args.settle:g} s pause before each timed request" if args.settle > 0 else ", sides timed back to back"
    print(f"rounds: up to {args.rounds} (alternating which side goes first){budget}, inner {args.inner}, scale {args.scale}{settle}")
    print()
    head = ["item", "rounds", "reference (median)", "ours (median)", "ratio ref/ours", "ratio range", "reference min / med / max",
            "ours min / med / max", "load before → after"]
    table = []
    for r in rows:
        table.append([r["item"], str(r["rounds"]), fmt(r["ref"][1]), fmt(r["ours"][1]), f"{r['ratio']:.2f}×",
                      f"{r['ratios'][0]:.2f}–{r['ratios'][2]:.2f}×", " / ".join(fmt(v) for v in r["ref"]),
                      " / ".join(fmt(v) for v in r["ours"]), f"{r['load'][0]} → {r['load'][1]}"])
    widths = [max(len(head[i]), *(len(t[i]) for t in table)) for i in range(len(head))] if table else []
    for line in [head] + table:
        print("  ".join(c.ljust(w) for c, w in zip(line, widths)))
    print()
    for r in rows:
        print(f"{r['item']}:\n  reference: {r['ref_note']}\n  ours:      {r['our_note']}")
    if args.markdown:
        print()
        print("| " + " | ".join(head[:6]) + " | load before → after |")
        print("|" + "---|" * 7)
        for t in table:
            print("| " + " | ".join(t[:6]) + f" | {t[8]} |")


if __name__ == "__main__":
    main()
