package enforce_test

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/layers"
)

// busyCircle is y₁² + y₂² = x₁² whose Eval also runs side, a computation on
// the shared worker pool (a float32 MLP's prediction over many rows, or a
// gorgonia matrix product above fastblas.MinFlops), as a constraint built
// on a surrogate model would.
type busyCircle struct{ side func() error }

func (busyCircle) Dims() (nx, ny, nc int) { return 1, 2, 1 }

func (b busyCircle) Eval(x, y, c, jy []float64) {
	if err := b.side(); err != nil {
		c[0] = math.NaN() // Project reports it
		return
	}
	c[0] = y[0]*y[0] + y[1]*y[1] - x[0]*x[0]
	if jy != nil {
		jy[0], jy[1] = 2*y[0], 2*y[1]
	}
}

// TestProjectWithPoolInEvalReturns: Project on an AdaNP whose constraint's
// Eval itself uses the worker pool returns, from one goroutine and from
// several at once on the same AdaNP, with GOMAXPROCS as it is and raised
// above the pool's size; before the pool ran nested calls on the caller,
// every worker waited for work that no worker was free to take and Project
// never returned. The test fails after a time limit instead of hanging.
func TestProjectWithPoolInEvalReturns(t *testing.T) {
	g := gorgonia.NewGraph()
	mlp, err := layers.NewMLP(g, []int{4, 32, 1}, layers.ReLU, layers.Identity,
		layers.WithDtype(tensor.Float32), layers.WithSeed(1))
	require.NoError(t, err)
	in := mat.NewDense(512, 4, nil)
	for i := range 512 {
		for j := range 4 {
			in.Set(i, j, float64(i%7-j))
		}
	}
	a := tensor.New(tensor.WithShape(40, 40), tensor.WithBacking(make([]float64, 1600)))
	sides := []struct {
		name string
		run  func() error
	}{
		{"MLP.Predict", func() error { _, err := mlp.Predict(in); return err }},
		{"MatMul", func() error { _, err := tensor.MatMul(a, a); return err }},
	}
	const rows = 64
	x, yhat := mat.NewDense(rows, 1, nil), mat.NewDense(rows, 2, nil)
	for i := range rows {
		x.Set(i, 0, 1+float64(i%5)/4)
		yhat.Set(i, 0, 0.3+float64(i%3))
		yhat.Set(i, 1, 0.9)
	}
	for _, side := range sides {
		p, err := enforce.NewAdaNP(busyCircle{side: side.run}, enforce.Settings{})
		require.NoError(t, err)
		for _, procs := range []int{runtime.GOMAXPROCS(0), 4*max(runtime.NumCPU(), runtime.GOMAXPROCS(0)) + 8} {
			for _, callers := range []int{1, 4} {
				label := fmt.Sprintf("%s GOMAXPROCS %d, %d callers", side.name, procs, callers)
				old := runtime.GOMAXPROCS(procs)
				errs := make([]error, callers)
				done := make(chan struct{})
				go func() {
					defer close(done)
					var wg sync.WaitGroup
					for i := range callers {
						wg.Add(1)
						go func() {
							defer wg.Done()
							var st enforce.Stats
							_, st, errs[i] = p.Project(x, yhat)
							if errs[i] == nil && !st.Converged() {
								errs[i] = fmt.Errorf("not converged: %v", st)
							}
						}()
					}
					wg.Wait()
				}()
				select {
				case <-done:
				case <-time.After(20 * time.Second):
					runtime.GOMAXPROCS(old)
					t.Fatalf("%s: Project did not return within 20 s: the worker pool deadlocked", label)
				}
				runtime.GOMAXPROCS(old)
				for _, err := range errs {
					assert.NoError(t, err, label)
				}
			}
		}
	}
}
