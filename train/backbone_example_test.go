package train_test

import (
	"fmt"
	"log"

	"gorgonia.org/gorgonia"

	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
	"github.com/enforce-nn/enforce/train"
)

// skipNet is a backbone that is not an MLP: ŷ = (h + tanh(hW₁ + b₁))W₂ + b₂
// with h = tanh(xW₀ + b₀), a skip connection around the middle layer.
type skipNet struct{ in, mid, out *layers.Dense }

func (s *skipNet) Forward(x *gorgonia.Node) (*gorgonia.Node, error) {
	h, err := s.in.Forward(x)
	if err != nil {
		return nil, err
	}
	z, err := s.mid.Forward(h)
	if err != nil {
		return nil, err
	}
	if h, err = gorgonia.Add(h, z); err != nil {
		return nil, err
	}
	return s.out.Forward(h)
}

func (s *skipNet) Learnables() gorgonia.Nodes {
	return append(append(s.in.Learnables(), s.mid.Learnables()...), s.out.Learnables()...)
}

// ExampleBackboneFunc trains ENFORCE with a hand-written backbone.
func ExampleBackboneFunc() {
	p := problems.FittingEquality{}
	data := p.Sample(100, 1)
	build := func(g *gorgonia.ExprGraph) (train.Backbone, error) {
		var s skipNet
		var err error
		if s.in, err = layers.NewDense(g, 1, 16, layers.Tanh, layers.WithSeed(1), layers.WithName("in")); err != nil {
			return nil, err
		}
		if s.mid, err = layers.NewDense(g, 16, 16, layers.Tanh, layers.WithSeed(2), layers.WithName("mid")); err != nil {
			return nil, err
		}
		if s.out, err = layers.NewDense(g, 16, 2, layers.Identity, layers.WithSeed(3), layers.WithName("out")); err != nil {
			return nil, err
		}
		return &s, nil
	}
	model, err := train.New(train.Config{
		Backbone: build, Constraint: p.Equalities(), LearnRate: 1e-2, Epochs: 100, Standardize: true, Quiet: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, ps := range model.Params() {
		fmt.Println(ps.Name, ps.Shape)
	}
	if _, err := model.Fit(data.X, data.Y); err != nil {
		log.Fatal(err)
	}
	_, stats, err := model.Predict(p.Sample(500, 2).X)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("max|c| ≤ 1e-6:", stats.After.Max <= 1e-6)
	// Output:
	// in.W [1 16]
	// in.b [16]
	// mid.W [16 16]
	// mid.b [16]
	// out.W [16 2]
	// out.b [2]
	// max|c| ≤ 1e-6: true
}
