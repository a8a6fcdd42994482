package train

import (
	"testing"

	"gorgonia.org/gorgonia"

	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
)

// benchModel returns a briefly trained model of the paper's fitting
// architecture (1×64 ReLU) in the given mode.
func benchModel(b *testing.B, mode Mode, epochs int) *Model {
	p := problems.FittingEquality{}
	m, err := New(Config{
		Sizes: []int{1, 64, 2}, Hidden: layers.ReLU, Constraint: p.Equalities(), Mode: mode,
		Epochs: epochs, Seed: 1, PyTorchInit: true, Quiet: true,
	})
	if err != nil {
		b.Fatal(err)
	}
	d := p.Sample(100, 1)
	if _, err := m.Fit(d.X, d.Y); err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkPredict measures Predict on 1000 samples, the paper's unit of
// inference time, for the MLP baseline (backbone only) and ENFORCE
// (backbone and AdaNP to max|c| ≤ 1e-6).
func BenchmarkPredict(b *testing.B) {
	x := problems.FittingEquality{}.Sample(1000, 2).X
	for _, mode := range []Mode{MLP, ENFORCE} {
		b.Run(mode.String(), func(b *testing.B) {
			m := benchModel(b, mode, 200)
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := m.Predict(x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTrainStep measures one full-batch training step on the
// paper's 100 training points (forward, AdaNP, backward, Adam), the unit
// of which Fit runs one per batch.
func BenchmarkTrainStep(b *testing.B) {
	p := problems.FittingEquality{}
	d := p.Sample(100, 1)
	for _, mode := range []Mode{MLP, Soft, ENFORCE} {
		b.Run(mode.String(), func(b *testing.B) {
			m := benchModel(b, mode, 200)
			g, err := m.NewGraph(100)
			if err != nil {
				b.Fatal(err)
			}
			if err := g.SetBatch(d.X, d.Y); err != nil {
				b.Fatal(err)
			}
			r := &runner{g: g, vm: gorgonia.NewTapeMachine(g.G, gorgonia.BindDualValues(g.Learnables...))}
			defer r.vm.Close()
			var acc accumulator
			b.ReportAllocs()
			for b.Loop() {
				if err := m.step(r, &acc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
