package enforce

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/diff/fd"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestOpSparse runs the gorgonia Op over an AdaNP on the sparse path:
// in every gradient mode its gradients with respect to a small network's
// weights equal those of the dense path (1e-9), and Unrolled's match
// finite differences.
func TestOpSparse(t *testing.T) {
	rnd := rand.New(rand.NewPCG(23, 24))
	sys := newSPSystem(rnd, 2, 8, 4, 3, 3)
	X := randDense(rnd, 4, 2, 0.4)
	A := randDense(rnd, 4, 8, 1)
	for _, mode := range []GradMode{Unrolled, Projector, Implicit, FinalProjector} {
		t.Run(mode.String(), func(t *testing.T) {
			var grads [2][][]float64
			var nets [2]*opNet
			for p, path := range []Path{PathDense, PathSparse} {
				s := Settings{Path: path, Grad: mode, Weights: AutoDiagonal, MinDepth: 3, MaxDepth: 3}
				a, err := NewAdaNP(sys, s)
				require.NoError(t, err)
				require.Equal(t, path == PathSparse, a.sp != nil)
				net := newOpNet(t, a, X, A, 6, 7, tensor.Float64)
				m := G.NewTapeMachine(net.g, G.BindDualValues(net.wx, net.w1, net.w2))
				require.NoError(t, m.RunAll())
				m.Close()
				assert.True(t, net.op.Projected())
				for _, w := range []*G.Node{net.wx, net.w1, net.w2} {
					grads[p] = append(grads[p], gradOf(t, w))
				}
				nets[p] = net
			}
			for k := range grads[0] {
				ctAssertClose(t, grads[0][k], grads[1][k], 1e-9, "weights", k)
			}
			if mode != Unrolled {
				return // the other modes are not the computed map's derivative
			}
			net := nets[1]
			for k, w := range []*G.Node{net.wx, net.w1, net.w2} {
				w0 := append([]float64(nil), w.Value().Data().([]float64)...)
				want := fd.Gradient(nil, func(v []float64) float64 { return net.lossAt(t, w, v) }, w0,
					&fd.Settings{Formula: fd.Central, Step: 1e-6})
				assert.Less(t, relErr(grads[1][k], want), 1e-6, "%s\n got %v\nwant %v", w.Name(), grads[1][k], want)
			}
		})
	}
}
