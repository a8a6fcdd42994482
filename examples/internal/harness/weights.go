package harness

import (
	"fmt"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/train"
)

// Values of the -weights flag of the programs that standardise (see
// AdaNPSettings).
const (
	// WeightsAuto is the reference's weighting (its PROJ_WEIGHTING_OPTION
	// 5): enforce.AutoDiagonal with Tikhonov ε = 1e-8, in original units.
	WeightsAuto = "auto"
	// WeightsStandardised is the metric of standardised units,
	// W = diag(σ_max²/σ_j²), which train.Config.Standardize gives AdaNP
	// settings with the default Identity weights.
	WeightsStandardised = "standardised"
)

// WeightsHelp is the help text of a -weights flag.
const WeightsHelp = `AdaNP's metric, in training and at inference: "auto" (the reference's: enforce.AutoDiagonal, ε = 1e-8, original units) or "standardised" (W = diag(σ_max²/σ_j²), the loss's units)`

// AutoReg is the Tikhonov ε of WeightsAuto: the reference's eps_chol.
const AutoReg = 1e-8

// AdaNPSettings returns the training and inference AdaNP settings of the
// -weights value: train.TrainSettings() and enforce's defaults, with
// enforce.AutoDiagonal and Reg AutoReg in both for WeightsAuto. It returns
// an error for any other value than WeightsAuto and WeightsStandardised.
func AdaNPSettings(weights string) (ts, infer enforce.Settings, err error) {
	ts = train.TrainSettings()
	switch weights {
	case WeightsAuto:
		ts.Weights, ts.Reg = enforce.AutoDiagonal, AutoReg
		infer = enforce.Settings{Weights: enforce.AutoDiagonal, Reg: AutoReg}
	case WeightsStandardised:
	default:
		return ts, infer, fmt.Errorf("-weights %q: want %s or %s", weights, WeightsAuto, WeightsStandardised)
	}
	return ts, infer, nil
}
