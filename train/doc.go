// Package train trains ENFORCE models and their baselines: a backbone
// (an MLP of package layers, or any gorgonia model given as a
// BackboneFunc) whose prediction ŷ an adaptive-depth neural
// projection (AdaNP, package enforce) projects onto c(x, y) = 0, trained
// with Adam on the loss of the paper's section 4.4 (package losses),
//
//	ℓ = ℓ_T(ỹ) + λ_D·(1/N)Σ‖ŷ_i − ỹ_i‖² + λ_C·(1/N)Σ‖c(x_i, ỹ_i)‖.
//
// A Model is built from a Config by New. Fit trains it by regression
// (ℓ_T = (1/N)Σ‖y_i − ỹ_i‖²), FitUnsupervised on a parametric
// optimisation problem (ℓ_T = (1/N)Σ f(x_i, ỹ_i)), and Predict returns
// predictions projected by a second AdaNP with the inference settings
// (max|c| ≤ 1e-6 by default) together with its Stats. The same Config with
// Mode MLP or Soft trains the unconstrained and the soft-constrained
// baselines on the same architecture, seed and data order.
//
// # Backbones
//
// Config.Sizes, Hidden and Output describe an MLP. Any other network is
// given as Config.Backbone, a BackboneFunc that builds it on a graph:
// a Backbone has Forward(x) and Learnables(), like layers.MLP. The model
// calls the function once per graph and binds the learnables, identified
// by name and shape, to its own weights. A Backbone that also has
// Predict(*mat.Dense) (DensePredictor) predicts in plain Go, and one that
// also has PredictTo (DensePredictorTo, as layers.MLP) lets
// Model.BackboneTo write into a caller's matrix; any other runs on a graph
// built for each prediction. Save writes the learnables by name and shape;
// LoadBackbone reads them back into a model built by the same function.
// examples/backbone trains a residual network this way.
//
// # Training
//
// Each Fit call runs Config.Epochs epochs; an epoch visits the samples in
// an order shuffled from Config.Seed, in batches of Config.BatchSize (the
// whole set by default), with one Adam step per batch. Training is
// deterministic: a Config and data give the same weights and History on
// every run, on any number of cores.
//
// In ENFORCE mode the training graph applies AdaNP with the training
// settings (mean|c| ≤ 1e-4 by default) and, unless Config.AlwaysProject,
// the activation rule of the paper's Algorithm 2: per batch, one NP step
// is taken first and the batch is projected only if that step does not
// make the task measure worse (the squared error against the labels for
// Fit; mean f + λ_C·mean‖c‖ for FitUnsupervised). It is implemented as an
// enforce.Gate on the AdaNP node.
//
// With Config.Standardize the network reads standardised inputs and
// predicts standardised outputs, mapped back to original units before
// AdaNP: constraints are evaluated and projected in original units, as in
// the paper's reference implementation, but with the default Identity
// weights the projection's metric is that of standardised units,
// W = diag(σ_max²/σ_j²), in which the loss and the activation rule
// measure distances (see Config.Standardize for why).
//
// # Precision
//
// Config.Precision enforce.Float32 trains and predicts with a float32
// backbone: float32 weights and Adam moments, a float32 training graph
// (whose AdaNP node, with Settings.Precision Auto, projects in
// enforce.Float32 and reports float64-checked residuals), and a plain-Go
// float32 forward pass for Predict; every float32 matrix product runs on
// enforce's AVX-512/AVX2 kernels in the default pure-Go build, and each
// float32 Dense layer is one fused graph operation. Float64 graphs and
// the plain-Go float64 forward pass run their matrix products on
// enforce's float64 kernel (internal/fastblas's Dgemm). On the §5.3
// network (50-200-200-100, batch 200) a float32 epoch takes about 2.2× less
// time than a float64 one and a forward pass of 833 inputs 3.8–4.7× less
// (BenchmarkMLPEpoch, BenchmarkMLPForward833 on 2 cores, 2026-11-27, on a
// loaded machine; before the float64 kernel, 6–8× and 11–13×), with the same test
// metrics to the tolerances TestFloat32Accuracy states. The API stays
// float64 (data, weights, predictions), and a float32 model saves, loads
// and resumes bit for bit.
// An Objective for FitUnsupervised must then build float32 nodes too (the
// activation rule still evaluates it on float64 nodes).
//
// Training stops with an error naming the epoch when the loss, a gradient
// or an updated weight is not finite; the weights are then those before
// the failing batch. Fit never leaves NaN weights behind. It also stops
// when the loss rises by orders of magnitude (Config.DivergenceFactor).
// Config.ClipNorm bounds each batch's gradient norm before Adam's step
// (as PyTorch's clip_grad_norm_).
//
// Config.Warmup trains the first epochs of an ENFORCE model without the
// projection, on the task loss alone, before training through it. For
// FitUnsupervised on a nonconvex feasible set this decides where the first
// projections land: on the paper's quadratic benchmark at (200, 150) it
// took the seeds that trained into a poor branch (+131–139 % above the
// optimum) to where the others end (docs/numerics.md, "Warm-up").
//
// # Validation, early stopping and schedules
//
// SetValidation gives Fit a held-out set (data.RandomSplit makes one):
// every epoch records its validation loss in Epoch.ValLoss, and
// Config.Patience stops training once it has not improved for that many
// epochs, leaving the best epoch's weights. Config.Schedule scales the
// learning rate per epoch (StepDecay, CosineDecay, ReduceOnPlateau), and
// History.WriteCSV writes the History for plotting.
//
// # Checkpoints and resuming
//
// A run that takes hours should survive the end of its process. With
// Config.Checkpoint{Dir, Every} set, Fit and FitUnsupervised write a
// checkpoint to Dir every Every of wall-clock time (5 minutes by default),
// possibly in the middle of an epoch, and at the end of the call (also
// when Config.Patience stops it early, with the best epoch's weights): the
// weights and standardisation, the Adam moments and step count, the
// shuffling stream, the position (epoch and batch), the History so far,
// the time spent training, the Config and a fingerprint of the training
// data, checksummed and replaced atomically. Resume(dir, cfg) rebuilds
// the model from the same Config and the checkpoint, and its next Fit on
// the same data finishes the interrupted call: the History, weights and
// predictions are the same bits as those of a run that was never
// interrupted. A program's -resume flag is then
//
//	model, err := train.Resume(dir, cfg)
//	if errors.Is(err, fs.ErrNotExist) {
//		model, err = train.New(cfg) // interrupted before its first checkpoint
//	}
//	if err != nil {
//		return err
//	}
//	hist, err := model.Fit(x, y) // the whole History of the run
//	elapsed := model.TrainingTime() // over every process of the run
//
// Resume rejects a Config that differs in anything training depends on
// (sizes, mode, settings, learning rate, batch size, epochs, seed, …),
// naming the fields, and Fit rejects other training data; a damaged or
// truncated checkpoint is an error, never a silently different model. Fit
// uses its own Adam, the arithmetic of gorgonia's AdamSolver to the bit,
// because gorgonia keeps the solver's state unexported.
//
// LoadCheckpoint(dir, c) reads the model of a checkpoint for prediction
// only, without its Config: how far a run in progress has got, while it
// goes on.
//
// # Progress
//
// Fit writes one line per Config.LogEvery epochs to Config.Progress
// (os.Stderr by default): epoch, loss, task loss, displacement, residual,
// largest |c|, mean AdaNP depth, the fraction of batches projected and the
// number of training samples whose projection missed the training
// tolerance. It returns the same numbers for every epoch as a History.
// When more than half the samples projected in an epoch miss the
// tolerance, it also writes a warning, once per call (often the outputs
// differ in scale by orders of magnitude: set Config.Standardize).
//
// # Prediction
//
// Predict and Backbone run the backbone in plain Go from the current
// weights rather than on a gorgonia graph, so they take any number of
// rows, need no machine, and give the same bits on every call; AdaNP then
// projects with enforce.AdaNP.Project. Predict's Stats.Missed lists the
// rows whose prediction missed the inference tolerance; with
// Config.Infer.RequireTol such a row is an error (enforce.ToleranceError).
// A model that was never trained, loaded or given weights refuses to
// predict or save (ErrNotFitted), and Load refuses a constraint whose
// values differ from the saved fingerprint's (ErrConstraintMismatch).
//
// # Writing your own loop
//
// Fit is a thin loop over the pieces a gorgonia user can drive directly.
// Model.NewGraph (or NewObjectiveGraph) returns a Graph for a batch size:
// the backbone, the AdaNP node with its gate, the loss and its gradient,
// with weights shared with the model. Any gorgonia solver and schedule
// work:
//
//	model, _ := train.New(cfg)
//	_ = model.FitStandardizers(x, y) // if cfg.Standardize
//	g, _ := model.NewGraph(batch)
//	vm := gorgonia.NewTapeMachine(g.G, gorgonia.BindDualValues(g.Learnables...))
//	defer vm.Close()
//	solver := gorgonia.NewAdamSolver(gorgonia.WithLearnRate(1e-3))
//	for epoch := range epochs {
//		for _, b := range batches {
//			_ = g.SetBatch(b.X, b.Y) // binds the batch and gives the gate its labels
//			_ = vm.RunAll()
//			// g.Loss.Value(), g.Op.Stats(), g.Op.Projected(), g.Outputs()
//			_ = solver.Step(gorgonia.NodesToValueGrads(g.Learnables))
//			vm.Reset()
//		}
//	}
//	pred, stats, _ := model.Predict(xTest)
//
// # Saving
//
// Save and Load (SaveFile, LoadFile) write and read a versioned JSON
// document holding the architecture, the dimensions of the constraint,
// the settings, the standardisation and the learnable tensors by name and
// shape; float64 values round-trip exactly, so a loaded model predicts the
// same bits. Version 2 (written since custom backbones) carries a SHA-256
// checksum of the model, so a damaged file is an error rather than a
// different model; version 1 files (no checksum) still load and predict
// as before. SaveFile replaces a file atomically (temporary file, fsync,
// rename). The constraint is code: Load takes it as an argument and
// checks its dimensions and a fingerprint of its values, evaluated in the
// constraint's sparsity pattern when it declares one, so that a model of a
// large sparse constraint saves and loads in memory that follows the
// nonzeros. Restore loads weights into an existing model and rejects a
// file for another architecture.
package train
