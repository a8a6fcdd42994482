package losses

import (
	"fmt"
	"math"
	"strconv"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce/internal/graphguard"
)

// checkLambda reports whether a loss weight is finite and non-negative.
func checkLambda(where string, lambda float64) error {
	if math.IsNaN(lambda) || math.IsInf(lambda, 0) || lambda < 0 {
		return fmt.Errorf("%s: weight %v must be finite and non-negative", where, lambda)
	}
	return nil
}

// checkPair checks that a and b are non-nil nodes of one graph with the same
// float dtype and the same shape of at least one axis.
func checkPair(where string, a, b *gorgonia.Node) error {
	switch {
	case a == nil || b == nil:
		return fmt.Errorf("%s: nil node", where)
	case a.Graph() != b.Graph():
		return fmt.Errorf("%s: nodes %q and %q are in different graphs", where, a.Name(), b.Name())
	case a.IsScalar() || b.IsScalar():
		return fmt.Errorf("%s: want batch nodes, got shapes %v and %v", where, a.Shape(), b.Shape())
	case !a.Shape().Eq(b.Shape()):
		return fmt.Errorf("%s: shapes %v and %v differ", where, a.Shape(), b.Shape())
	case a.Dtype() != b.Dtype():
		return fmt.Errorf("%s: dtypes %v and %v differ", where, a.Dtype(), b.Dtype())
	}
	if err := graphguard.CheckFloat(a.Dtype()); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	return nil
}

// scalarConstant adds the constant v of dtype dt to g. gorgonia merges
// constants by name and names them by their printed value, which is the
// same for float32 and float64; the name here includes the dtype and every
// digit.
func scalarConstant(g *gorgonia.ExprGraph, dt tensor.Dtype, v float64) *gorgonia.Node {
	var val any = v
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if dt == tensor.Float32 {
		val = float32(v)
		s = strconv.FormatFloat(float64(float32(v)), 'g', -1, 32)
	}
	return g.AddNode(gorgonia.NewConstant(val, gorgonia.WithName(fmt.Sprintf("losses.const(%v:%s)", dt, s))))
}

// scale returns k·n for a scalar node n, or n itself when k = 1.
func scale(n *gorgonia.Node, k float64) (*gorgonia.Node, error) {
	if k == 1 {
		return n, nil
	}
	return gorgonia.Mul(n, scalarConstant(n.Graph(), n.Dtype(), k))
}
