package losses

import (
	"fmt"

	"gorgonia.org/gorgonia"

	"github.com/enforce-nn/enforce/internal/graphguard"
)

// Objective returns the batch mean of a per-sample objective, the task loss
// of unsupervised training for parametric optimisation: ℓ_T = (1/N) Σ_i
// f(x_i, y_i) for inputs x (N×nx) and solutions y (N×ny).
//
// f builds the objective on the graph and returns either a vector of N
// per-sample values (shape (N) or (N, 1)), which Objective averages, or a
// scalar, which Objective takes to be the batch objective already and
// returns unchanged. x is passed to f as given and may be nil if f does not
// need it. A panic inside f is recovered and returned as an error.
func Objective(f func(x, y *gorgonia.Node) (*gorgonia.Node, error), x, y *gorgonia.Node) (out *gorgonia.Node, err error) {
	const where = "losses: Objective"
	switch {
	case f == nil:
		return nil, fmt.Errorf("%s: nil objective function", where)
	case y == nil:
		return nil, fmt.Errorf("%s: nil y", where)
	case !y.IsMatrix():
		return nil, fmt.Errorf("%s: y %q has shape %v, want (N, ny)", where, y.Name(), y.Shape())
	}
	defer graphguard.Recover(&out, &err, where)
	o, err := f(x, y)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if o == nil {
		return nil, fmt.Errorf("%s: objective function returned a nil node", where)
	}
	if err := graphguard.CheckFloat(o.Dtype()); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if o.IsScalar() {
		return o, nil
	}
	n, s := y.Shape()[0], o.Shape()
	if !(s.Dims() == 1 && s[0] == n) && !(s.Dims() == 2 && s[0] == n && s[1] == 1) {
		return nil, fmt.Errorf("%s: objective has shape %v, want (%d), (%d, 1) or a scalar", where, s, n, n)
	}
	if out, err = gorgonia.Mean(o); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return out, nil
}
