package train

import (
	"errors"
	"fmt"
	"slices"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce"
)

// ThetaName is the name of the learnable θ of trainable projection weights
// (enforce.TrainableDiagonal, W = diag(exp(θ))): a model whose
// Config.Train uses them, in ENFORCE mode, learns θ ∈ ℝ^ny with its
// backbone. θ starts at 0 (W = I) and is the last learnable of Params,
// Weights and SetWeights; Save, Load, checkpoints and Resume keep it as
// they keep the backbone's weights, and Adam steps it with them.
// Predict projects with the learned θ when Config.Infer uses
// TrainableDiagonal weights too (which then requires Train to), and with
// Infer's own weights otherwise. Constraints are evaluated and projected
// in original units, so W weighs the outputs in their original units
// (Config.Standardize's metric replaces only Identity weights).
const ThetaName = "enforce.theta"

// learnsTheta reports whether the model learns θ.
func (r *resolved) learnsTheta() bool {
	return r.Mode == ENFORCE && r.train.Weights == enforce.TrainableDiagonal
}

// checkTheta checks the use of trainable weights in r's settings.
func (r *resolved) checkTheta() error {
	if r.Infer.Weights == enforce.TrainableDiagonal && !r.learnsTheta() {
		return errors.New("train: Config.Infer uses trainable-diagonal weights, whose θ is learned only with Config.Train.Weights TrainableDiagonal in ENFORCE mode")
	}
	return nil
}

// addTheta appends θ = 0 to the model's learnables.
func (m *Model) addTheta() error {
	if slices.Contains(m.names, ThetaName) {
		return fmt.Errorf("train: the backbone has a learnable named %q, the name of the projection weights θ", ThetaName)
	}
	m.params = append(m.params, tensor.New(tensor.WithShape(m.cfg.ny), tensor.Of(m.cfg.dtype)))
	m.names = append(m.names, ThetaName)
	return nil
}

// backboneParams returns the number of the backbone's learnables: all of
// them but θ.
func (m *Model) backboneParams() int {
	if m.cfg.learnsTheta() {
		return len(m.params) - 1
	}
	return len(m.params)
}

// thetaNode returns a node of g holding the model's θ.
func (m *Model) thetaNode(g *gorgonia.ExprGraph) *gorgonia.Node {
	return gorgonia.NewVector(g, m.cfg.dtype, gorgonia.WithShape(m.cfg.ny), gorgonia.WithName(ThetaName), gorgonia.WithValue(m.params[len(m.params)-1]))
}

// theta returns the model's θ in float64.
func (m *Model) theta() []float64 {
	v, _ := float64s(m.params[len(m.params)-1].Data())
	return v
}
