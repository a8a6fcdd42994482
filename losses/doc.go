// Package losses builds the terms of the ENFORCE training loss (section 4.4
// of the paper) on gorgonia expression graphs,
//
//	ℓ = ℓ_T + (λ_D/N) Σ_i ‖ŷ_i − ỹ_i‖² + (λ_C/N) Σ_i ‖c(x_i, ỹ_i)‖₂,
//
// with ŷ the backbone prediction and ỹ its projection, together with the
// task losses ℓ_T of the paper's experiments (MSE for regression, Objective
// for unsupervised parametric optimisation) and the penalties of the soft
// constrained baseline (SoftPenalty, ‖c‖²; Residual, ‖c‖, for the paper's
// §5.1; HingePenalty, Σ_j max(0, g_j)², for inequalities, §5.2).
//
// Every builder takes batch nodes whose first axis indexes the N samples,
// returns a scalar node of the inputs' dtype (Float64 or Float32) and an
// error, and never panics on bad input. Residual, SoftPenalty and HingePenalty evaluate
// the constraint sample by sample in plain Go (in chunks of samples for a
// constraint with a batched evaluation, enforce.Capabilities.EvalBatch,
// and with matrix products over the batch for enforce.Linear) through a custom gorgonia Op whose gradient is
// another Op, so they work with gorgonia.Grad and the TapeMachine as well
// as with the LispMachine.
//
// A typical supervised loss is
//
//	task, _ := losses.MSE(ytilde, y)
//	disp, _ := losses.Displacement(yhat, ytilde, 0.5)
//	res, _ := losses.Residual(c, x, ytilde, 1)
//	loss := gorgonia.Must(gorgonia.ReduceAdd(gorgonia.Nodes{task, disp, res}))
//
// Normalisation: MSE averages over all N·m entries (PyTorch's default
// MSELoss); SumSquaredMean, Displacement, Residual, SoftPenalty and HingePenalty sum over
// the entries of a sample and average over the N samples, as the paper's
// formulas do. For one output (m = 1) the two agree.
package losses
