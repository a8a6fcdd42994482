#!/usr/bin/env python3
"""Train the PyTorch reference (enforce-nn) on our (200, 150) quadratic
instance and inputs at Table B's budget, one model seed after another, and
evaluate it as examples/nonconvex-quadratic evaluates ours.

Usage (from anywhere in the repository):

    python3 examples/bench/reference/tableb.py --reference PATH
        [--seeds 1,2,3,4,5] [--epochs 50] [--ntrain 1000] [--nref 20]
        [--ipopt DIR/reference.json | --ipopt-mean -31.95] [--threads 1] [--out DIR]
        [--dump-init DIR]

PATH is the reference's checkout (the folder that holds enforce/ and
benchmark_problems/), or $ENFORCE_REFERENCE. Without torch, numpy or the
checkout the script says why and exits with status 0, as compare.py does.

What it does:

 1. builds examples/bench and runs it with -instances -tableb-ntrain NTRAIN,
    which writes the (200, 150) instance of examples/nonconvex-quadratic
    -seed 1, the NTRAIN training inputs that program draws at -ntrain NTRAIN
    and its 833 test inputs (little-endian float64; see writeInstances in
    items.go);
 2. for each model seed s builds the reference's own ENFORCE model and
    Trainer as its scripts/run_benchmark.py does for the nonconvex problems
    (benchmark_problems/config_benchmarking.py: three hidden ReLU layers of
    200 (its HIDDEN_LAYERS = 2 counts the layers after the input layer; the
    paper and our program have two), Adam 1e-4, batch
    200, W = I, tolerances 1e-3, λ_D = 0.5, no soft term, VERBOSE = False so
    every training batch is projected, unrolled autograd), with
    ENFORCEConfig.random_seed = TrainingConfig.random_seed = s (its
    initialisation and its shuffling, as run_benchmark.py seeds a run); the
    instance goes in through its NonlinearProgram (parameter pickle, analytic
    Jacobian, float32), the inputs standardised with the training inputs'
    mean and population σ, the outputs unscaled (identity output scaling: our
    program has no labels; the reference's benchmark scales the outputs with
    the mean and σ of its IPOPT labels, --output-scaling below);
 3. trains EPOCHS epochs and predicts the test inputs as its Evaluator does
    (model.predict in batches of 200, max|c| ≤ 1e-3 per batch);
 4. prints per seed, with the float32 predictions evaluated in float64 as
    our program evaluates its own: the mean objective over all test inputs
    and over the first NREF (the inputs IPOPT solved), the gap
    (mean obj. − IPOPT mean)/|IPOPT mean| on those NREF, max|c| over all
    test inputs and constraints, and how many test predictions have max|c|
    above 1e-3; then the median and worst gap over the seeds.

With --dump-init DIR it trains nothing: for each seed it writes the
reference model's initial weights (after the seeding above) to
DIR/init-seed<s>.json in our layout (train.Model.Weights: W0 as an
input×output row-major matrix, b0, W1, b1, …; the float32 values exactly), for
examples/bench -tableb-init DIR -tableb-set layers3.

The IPOPT mean comes from our program's cached reference optima
(--ipopt: the reference.json in its -resume folder, of which the first NREF
results are averaged) or is given (--ipopt-mean).
"""

import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare  # noqa: E402  (the helpers of the same-run timing comparison)


def missing(msg):
    """Say why nothing is trained and exit with status 0."""
    print(f"tableb.py: {msg}; nothing trained.")
    sys.exit(0)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reference", default=os.environ.get("ENFORCE_REFERENCE", ""),
                   help="the reference's checkout (default: $ENFORCE_REFERENCE)")
    p.add_argument("--seeds", default="1,2,3,4,5", help="comma-separated model seeds (default 1,2,3,4,5)")
    p.add_argument("--epochs", type=int, default=50, help="epochs (Table B's budget: 50)")
    p.add_argument("--ntrain", type=int, default=1000, help="training inputs (Table B's budget: 1000)")
    p.add_argument("--nref", type=int, default=20, help="test inputs IPOPT solved, the first ones (default 20)")
    p.add_argument("--ipopt", default="", help="our program's reference.json (its -resume folder) for the IPOPT mean")
    p.add_argument("--ipopt-mean", type=float, default=float("nan"),
                   help="the IPOPT mean over the first NREF test inputs, if --ipopt is not given")
    p.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    p.add_argument("--output-scaling", default="identity", choices=["identity"],
                   help="the reference's output scaling: identity (our program has no labels to scale with)")
    p.add_argument("--go-bin", default="", help="a built examples/bench to use instead of building one")
    p.add_argument("--instances", default="", help="a folder -instances -tableb-ntrain NTRAIN wrote, instead of writing one")
    p.add_argument("--dump-init", default="", help="write each seed's initial weights to DIR/init-seed<s>.json and train nothing")
    p.add_argument("--out", default="", help="folder for each seed's training log and a JSON line per seed")
    return p.parse_args()


def ipopt_mean(args):
    if args.ipopt:
        with open(args.ipopt) as f:
            results = json.load(f)["Results"]
        objs = [float(r["Objective"]) for r in results[:args.nref]]
        if len(objs) < args.nref:
            sys.exit(f"tableb.py: {args.ipopt} holds {len(objs)} results, fewer than --nref {args.nref}")
        return statistics.mean(objs), f"mean of the first {args.nref} results of {args.ipopt}"
    if args.ipopt_mean == args.ipopt_mean:
        return args.ipopt_mean, "--ipopt-mean"
    sys.exit("tableb.py: give --ipopt (our program's reference.json) or --ipopt-mean")


def evaluate64(a, np, x, y):
    """Objective per row and |c| of the predictions y at inputs x, float64."""
    q, p = a["tableb.Q"], a["tableb.P"]
    f = 0.5 * (y * y) @ q + np.sin(y) @ p
    A, C, D = a["tableb.A"], a["tableb.C"], a["tableb.D"]
    nc, no, _ = A.shape
    ay = (A.reshape(nc * no, no) @ y.T).reshape(nc, no, -1)  # [NC, NO, N]
    quad = np.einsum("ijb,bj->bi", ay, y)
    c = quad + y @ C.T + D - x ** 3
    return f, np.abs(c)


def build_model(ref, a, torch, seed):
    """The reference's ENFORCE model for model seed seed, as run_benchmark.py builds it."""
    prog = ref.programs["tableb"]
    xtr = a["tableb.train"]
    nc, no = a["tableb.C"].shape
    xs = ref._t(xtr)
    scaling_in = (xs.mean(dim=0), xs.std(dim=0, unbiased=False))
    scaling_out = (torch.zeros(no), torch.ones(no))
    cfg = ref.ENFORCEConfig(
        input_neurons=nc, hidden_neurons=200, output_neurons=no, hidden_layers=2,
        training_tolerance=1e-3, inference_tolerance=1e-3, max_it=100, epoch_start_hard_constrained=0,
        ada_np_auto_activation=True, ift_backward=False, regularise_gram=False, supervised=False,
        soft_constrained=False, weight_loss_displacement=0.5, weight_loss_soft=0.0, verbose=False,
        random_seed=seed)
    ssl = ref.SSLLoss(config=ref.SSLConfig(soft_constrained=False, weight_loss_soft=0.0), opt_prob=prog)
    model = ref.ENFORCE(scaling_input=scaling_in, scaling_output=scaling_out, c=prog.eq_constraints,
                        config=cfg, constrained=True, weighting_option=1, ssl_loss=ssl, jac=prog.jacobian)
    return model, xs


def dump_init(torch, model, xs, seed, folder):
    """Write model's weights in our layout (see the module's docstring), with
    the first training input (unscaled) and the network's output there, as
    a check of the layout."""
    layers = [model.input_layer, *model.hidden_layers, model.output_layer]
    weights = []
    for layer in layers:
        w = layer.weight.detach().double()  # [out, in]
        weights.append(w.t().contiguous().reshape(-1).tolist())
        weights.append(layer.bias.detach().double().tolist())
    sizes = [layers[0].in_features] + [layer.out_features for layer in layers]
    path = os.path.join(folder, f"init-seed{seed}.json")
    x0 = xs[:1]
    with torch.no_grad():
        y0 = model.forward((x0 - model.mean_input) / model.std_input)
    with open(path, "w") as f:
        json.dump({"seed": seed, "sizes": sizes, "weights": weights,
                   "x0": x0[0].double().tolist(), "y0": y0[0].double().tolist()}, f)
    return path


def train_seed(ref, a, torch, np, seed, args, ipopt, log):
    """Train and evaluate the reference's model with model seed seed."""
    xte = a["tableb.test"]
    no = a["tableb.C"].shape[1]
    model, xs = build_model(ref, a, torch, seed)
    x = (xs - model.mean_input) / model.std_input
    y = torch.zeros(x.shape[0], no)  # no labels: the loss is the objective
    trainer = ref.Trainer(model, ref.TrainingConfig(batch_size=200, epochs=args.epochs, learning_rate=1e-4,
                                                    random_seed=seed))
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(log):  # its Trainer prints a line per epoch
        trainer.fit(x, y)
    train_sec = time.perf_counter() - t0

    model.eval()
    xt = (ref._t(xte) - model.mean_input) / model.std_input
    preds, iters = [], []
    t0 = time.perf_counter()
    with torch.no_grad(), contextlib.redirect_stdout(log):
        for start in range(0, xt.shape[0], 200):  # as its Evaluator, batch_size = BATCH_SIZE
            ytilde, _, it = model.predict(xt[start:start + 200])
            preds.append(ytilde)
            iters.append(it)
    infer_sec = time.perf_counter() - t0
    _, yu = model.unscale(xt, torch.cat(preds, dim=0))
    y64 = yu.numpy().astype(np.float64)
    f, absc = evaluate64(a, np, xte, y64)
    ref_obj = float(f[:args.nref].mean())
    row_max = absc.max(axis=1)
    last = model.losses[-1]
    return {
        "seed": seed, "obj": float(f.mean()), "obj_ref_inputs": ref_obj,
        "gap": (ref_obj - ipopt) / abs(ipopt), "max_c": float(row_max.max()), "mean_c": float(absc.mean()),
        "above_tol": int((row_max > 1e-3).sum()), "n_test": int(xte.shape[0]),
        "train_min": train_sec / 60, "infer_sec": infer_sec, "infer_iterations": iters,
        "last_epoch": {k: float(v) for k, v in last.items()},
    }


def main():
    args = parse_args()
    if "OMP_WAIT_POLICY" not in os.environ:
        os.environ["OMP_WAIT_POLICY"] = "passive"  # as compare.py, before torch loads libgomp
    try:
        import numpy as np
        import torch
    except ImportError as e:
        missing(f"cannot import torch and numpy with {sys.executable} ({e})")
    ref_dir = os.path.abspath(args.reference) if args.reference else ""
    if not ref_dir or not os.path.isfile(os.path.join(ref_dir, "enforce", "core", "model.py")):
        missing("no reference checkout (give --reference PATH or set ENFORCE_REFERENCE to the folder holding "
                "enforce/core/model.py)")
    seeds = [int(s) for s in args.seeds.split(",") if s]
    if not seeds or args.epochs < 1 or args.ntrain < 200 or args.nref < 1 or args.threads < 1:
        sys.exit("tableb.py: want seeds, --epochs ≥ 1, --ntrain ≥ 200 (one batch), --nref ≥ 1, --threads ≥ 1")
    mean_ipopt, ipopt_from = ipopt_mean(args)
    torch.set_num_threads(args.threads)
    if args.out:
        os.makedirs(args.out, exist_ok=True)

    with tempfile.TemporaryDirectory(prefix="enforce-tableb-") as tmp:
        inst = args.instances
        if not inst:
            binary = args.go_bin or compare.build_ours(tmp)
            inst = os.path.join(tmp, "instances")
            compare.subprocess.run([binary, "-instances", inst, "-scale", "100", "-tableb-ntrain", str(args.ntrain)],
                                   check=True)
        a = compare.load_instances(inst, np)
        if a["tableb.train"].shape[0] != args.ntrain:
            sys.exit(f"tableb.py: {inst} holds {a['tableb.train'].shape[0]} training inputs, not --ntrain {args.ntrain}")
        ref = compare.Reference(ref_dir, a, tmp, torch, np, 1)  # puts ref_dir on sys.path
        from benchmark_problems.parametric_optimization.opt_problem import NonlinearProgram  # noqa: E402
        path = os.path.join(tmp, "tableb.pkl")
        with open(path, "wb") as f:
            compare.pickle.dump(ref._params("tableb"), f)
        ref.programs["tableb"] = NonlinearProgram(params_path=path)

        commit = compare.git("rev-parse", "--short=12", "HEAD")
        if compare.git("status", "--porcelain", "--untracked-files=no"):
            commit += " (with uncommitted changes)"
        print(f"date: {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}; machine: {compare.cpu_model()}, "
              f"{os.cpu_count()} CPUs; load {compare.loadavg()}")
        print(f"reference: enforce-nn at {ref_dir}; torch {torch.__version__}, {torch.get_num_threads()} thread(s), "
              f"BLAS libraries loaded: {', '.join(compare.blas_libraries()) or 'none found'}; "
              f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}; ours: commit {commit or 'unknown'}")
        print(f"(200, 150) instance of -seed 1, {args.ntrain} training / {a['tableb.test'].shape[0]} test inputs, "
              f"{args.epochs} epochs, output scaling {args.output_scaling}; IPOPT mean {mean_ipopt:.4f} ({ipopt_from})",
              flush=True)
        if args.dump_init:
            os.makedirs(args.dump_init, exist_ok=True)
            for seed in seeds:
                model, xs = build_model(ref, a, torch, seed)
                print(f"[reference seed {seed}] initial weights: {dump_init(torch, model, xs, seed, args.dump_init)}", flush=True)
            return
        rows = []
        for seed in seeds:
            logpath = os.path.join(args.out, f"seed{seed}.log") if args.out else os.devnull
            with open(logpath, "w", buffering=1) as log:
                r = train_seed(ref, a, torch, np, seed, args, mean_ipopt, log)
            r["load_after"] = compare.loadavg()
            rows.append(r)
            print(f"[reference seed {seed}] test: obj. {r['obj']:.4f} (first {args.nref}: {r['obj_ref_inputs']:.4f}), "
                  f"gap to IPOPT {100 * r['gap']:+.2f}%, max|c| {r['max_c']:.3g}, {r['above_tol']} of {r['n_test']} "
                  f"above 1e-3; train {r['train_min']:.2f} min, inference iterations {r['infer_iterations']}; "
                  f"last epoch: {r['last_epoch']}; load {r['load_after']}", flush=True)
            if args.out:
                with open(os.path.join(args.out, "results.jsonl"), "a") as f:
                    f.write(json.dumps(r) + "\n")
    gaps = [r["gap"] for r in rows]
    print()
    print("| model seed | reference obj. | reference gap | reference max\\|c\\| | above 1e-3 |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['seed']} | {r['obj_ref_inputs']:.2f} | {100 * r['gap']:+.1f} % | {r['max_c']:.2g} | "
              f"{r['above_tol']} of {r['n_test']} |")
    print(f"\nmedian gap {100 * statistics.median(gaps):+.1f} %, worst {100 * max(gaps):+.1f} % over {len(gaps)} seed(s)")


if __name__ == "__main__":
    main()
