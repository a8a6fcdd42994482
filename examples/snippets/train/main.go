package main

import (
	"fmt"
	"log"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/hd"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/train"
)

func main() {
	// Every sample satisfies c(x, y) = (y₁/2)² + x² + y₂ = 0.
	c, err := enforce.Func(1, 2, 1, func(x, y, c []hd.Number) {
		c[0] = hd.Add(hd.Square(hd.Scale(0.5, y[0])), hd.Square(x[0]), y[1])
	})
	if err != nil {
		log.Fatal(err)
	}
	// 200 samples of y = (2 sin 5x, −sin² 5x − x²) on [−2, 2].
	x, y := mat.NewDense(200, 1, nil), mat.NewDense(200, 2, nil)
	for i := range 200 {
		v := -2 + 4*float64(i)/199
		s := math.Sin(5 * v)
		x.Set(i, 0, v)
		y.SetRow(i, []float64{2 * s, -s*s - v*v})
	}

	model, err := train.New(train.Config{
		Sizes: []int{1, 32, 2}, Hidden: layers.Tanh, // a 1×32 tanh MLP predicts ŷ
		Constraint:  c,    // AdaNP projects ŷ onto c = 0
		Standardize: true, // scale inputs and outputs to unit variance
		LearnRate:   1e-2, Epochs: 2000, Seed: 1, Quiet: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := model.Fit(x, y); err != nil {
		log.Fatal(err)
	}

	if err := model.SaveFile("model.json"); err != nil { // checksummed JSON, written atomically
		log.Fatal(err)
	}
	loaded, err := train.LoadFile("model.json", c) // a constraint is code: pass it again
	if err != nil {
		log.Fatal(err)
	}
	pred, stats, err := loaded.Predict(mat.NewDense(3, 1, []float64{-1.5, 0.1, 1.9}))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("ỹ =\n%.3f\n", mat.Formatted(pred))
	fmt.Println(stats) // depth, max|c| before → after (≤ 1e-6 by default), …
}
