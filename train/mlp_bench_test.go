package train

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
)

// The reference set-up of issue 16's MLP rows: the §5.3 network
// 50-200-200-100 (N_C = 50 inputs, N_O = 100 outputs, ReLU), Adam, batch
// 200, 8334 training inputs.
var mlpBenchSizes = []int{50, 200, 200, 100}

const (
	mlpBenchRows  = 8334
	mlpBenchBatch = 200
)

// mlpBenchModel returns an MLP-mode model of the reference network in the
// given precision, with the §5.3 nonconvex-linear constraint (100, 50)
// (used only to report residuals).
func mlpBenchModel(b *testing.B, prec enforce.Precision, epochs int) *Model {
	b.Helper()
	p, err := problems.NewNonconvexLinear(100, 50, 1)
	if err != nil {
		b.Fatal(err)
	}
	m, err := New(Config{
		Sizes: mlpBenchSizes, Hidden: layers.ReLU, Constraint: p.Equalities(), Mode: MLP,
		BatchSize: mlpBenchBatch, Epochs: epochs, Seed: 1, PyTorchInit: true, Quiet: true, Precision: prec,
	})
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// randomMatrix returns an r×c matrix of uniform values in [−1, 1).
func randomMatrix(r, c int, seed uint64) *mat.Dense {
	rng := rand.New(rand.NewPCG(seed, 0))
	a := mat.NewDense(r, c, nil)
	for i := range a.RawMatrix().Data {
		a.RawMatrix().Data[i] = 2*rng.Float64() - 1
	}
	return a
}

var benchPrecisions = []enforce.Precision{enforce.Float64, enforce.Float32}

// BenchmarkMLPEpoch measures one epoch of MLP-mode (plain mean squared
// error) training of the reference network on 8334 random inputs and
// labels, in float64 and float32: 42 batches of forward, backward and
// Adam. Issue 16's reference (PyTorch 1.13 on 2 threads with OpenBLAS)
// takes 0.22 s on the project's 2-core machine.
func BenchmarkMLPEpoch(b *testing.B) {
	x := randomMatrix(mlpBenchRows, mlpBenchSizes[0], 1)
	y := randomMatrix(mlpBenchRows, mlpBenchSizes[len(mlpBenchSizes)-1], 2)
	for _, prec := range benchPrecisions {
		b.Run(prec.String(), func(b *testing.B) {
			m := mlpBenchModel(b, prec, 1)
			if _, err := m.Fit(x, y); err != nil { // builds the graphs
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Fit(x, y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMLPForward833 measures the plain-Go forward pass of the
// reference network (Model.Backbone) on 833 inputs, in float64 and
// float32. Issue 16's reference takes 1.7 ms.
func BenchmarkMLPForward833(b *testing.B) {
	x := randomMatrix(833, mlpBenchSizes[0], 3)
	for _, prec := range benchPrecisions {
		b.Run(prec.String(), func(b *testing.B) {
			m := mlpBenchModel(b, prec, 1)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Backbone(x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMLPBackboneTo833 is BenchmarkMLPForward833 through
// Model.BackboneTo into one destination reused by every call.
func BenchmarkMLPBackboneTo833(b *testing.B) {
	x := randomMatrix(833, mlpBenchSizes[0], 3)
	for _, prec := range benchPrecisions {
		b.Run(prec.String(), func(b *testing.B) {
			m := mlpBenchModel(b, prec, 1)
			dst := mat.NewDense(833, mlpBenchSizes[len(mlpBenchSizes)-1], nil)
			b.ReportAllocs()
			for b.Loop() {
				if err := m.BackboneTo(dst, x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMLPPredict833 is BenchmarkMLPForward833 through Model.Predict
// (the backbone, then the check of the constraint that an MLP-mode model
// reports in its Stats), the reference bench's mlp-forward item.
func BenchmarkMLPPredict833(b *testing.B) {
	x := randomMatrix(833, mlpBenchSizes[0], 3)
	for _, prec := range benchPrecisions {
		b.Run(prec.String(), func(b *testing.B) {
			m := mlpBenchModel(b, prec, 1)
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := m.Predict(x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
