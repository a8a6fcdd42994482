package train

import (
	"fmt"
	"strings"

	"gorgonia.org/gorgonia"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/losses"
)

// Penalty selects the form of the Soft mode's penalty on the constraint
// values c(x_i, ŷ_i) of the N samples of a batch, weighted by λ_C
// (Config.LambdaC).
type Penalty int

const (
	// SquaredNorm is λ_C·(1/N)Σ_i‖c(x_i, ŷ_i)‖₂² (losses.SoftPenalty), the
	// default.
	SquaredNorm Penalty = iota
	// Norm is λ_C·(1/N)Σ_i‖c(x_i, ŷ_i)‖₂ (losses.Residual), unsquared: the
	// residual term of the paper's loss and its §5.1 Soft baseline.
	Norm
	// SquaredHinge is λ_C·(1/N)Σ_iΣ_j max(0, c_j(x_i, ŷ_i))²
	// (losses.HingePenalty) for a constraint whose components are
	// inequalities c_j(x, y) ⩽ 0: the paper's §5.2 Soft baseline, "a
	// quadratic penalty on constraint violations". Give it the raw
	// inequalities g, not the Fischer–Burmeister constraint that
	// enforce.WithInequalities builds from them (whose residual at zero
	// multipliers is about 2·max(g_j, 0)); a constraint with latent
	// variables is an error (see Config.PenaltyConstraint).
	SquaredHinge
	// SquaredNormMeanAbs is
	// λ_C·((1/N)Σ_i‖c(x_i, ŷ_i)‖₂² + (1/(N·nc))Σ_iΣ_j|c_j(x_i, ŷ_i)|)
	// (losses.SquaredNormMeanAbsPenalty): the PyTorch reference's soft
	// loss with its SOFT_CONSTRAINED switch on, one weight on both terms.
	SquaredNormMeanAbs
)

var penaltyNames = [...]string{SquaredNorm: "SquaredNorm", Norm: "Norm", SquaredHinge: "SquaredHinge", SquaredNormMeanAbs: "SquaredNormMeanAbs"}

func (p Penalty) valid() bool { return p >= 0 && int(p) < len(penaltyNames) }

// String returns "SquaredNorm", "Norm", "SquaredHinge" or
// "SquaredNormMeanAbs".
func (p Penalty) String() string {
	if p.valid() {
		return penaltyNames[p]
	}
	return fmt.Sprintf("Penalty(%d)", int(p))
}

// MarshalText implements encoding.TextMarshaler with the penalty's name.
func (p Penalty) MarshalText() ([]byte, error) {
	if !p.valid() {
		return nil, fmt.Errorf("train: cannot marshal invalid %v", p)
	}
	return []byte(p.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler; case is ignored.
func (p *Penalty) UnmarshalText(text []byte) error {
	for i, name := range penaltyNames {
		if strings.EqualFold(string(text), name) {
			*p = Penalty(i)
			return nil
		}
	}
	return fmt.Errorf("train: unknown penalty %q (want SquaredNorm, Norm, SquaredHinge or SquaredNormMeanAbs)", text)
}

// softTerm returns the Soft penalty on the predictions yhat for inputs x:
// Config.Penalty's form on Config.PenaltyConstraint, or on Constraint
// when that is nil.
func (m *Model) softTerm(x, yhat *gorgonia.Node) (*gorgonia.Node, error) {
	cfg := m.cfg
	c := m.view.loss
	switch {
	case cfg.PenaltyConstraint != nil:
		c = newView(cfg.PenaltyConstraint, cfg.nx).loss
	case cfg.Penalty == SquaredHinge && enforce.CapabilitiesOf(cfg.Constraint).Latent > 0:
		return nil, fmt.Errorf("the SquaredHinge penalty wants the raw inequalities g(x, y) ⩽ 0, but the constraint has %d latent variables (a Fischer–Burmeister constraint?): set Config.PenaltyConstraint to g",
			enforce.CapabilitiesOf(cfg.Constraint).Latent)
	}
	switch cfg.Penalty {
	case Norm:
		return losses.Residual(c, x, yhat, cfg.lambdaC)
	case SquaredHinge:
		return losses.HingePenalty(c, x, yhat, cfg.lambdaC)
	case SquaredNormMeanAbs:
		return losses.SquaredNormMeanAbsPenalty(c, x, yhat, cfg.lambdaC)
	}
	return losses.SoftPenalty(c, x, yhat, cfg.lambdaC)
}
