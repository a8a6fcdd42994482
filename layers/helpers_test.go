package layers

import (
	"math"
	"math/rand/v2"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// randMatrix returns r×c values drawn uniformly from [−1, 1) with a fixed seed.
func randMatrix(seed uint64, r, c int) []float64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	v := make([]float64, r*c)
	for i := range v {
		v[i] = 2*rng.Float64() - 1
	}
	return v
}

// inputNode adds a (r, c) variable named name holding v, converted to dt.
func inputNode(g *gorgonia.ExprGraph, dt tensor.Dtype, name string, r, c int, v []float64) *gorgonia.Node {
	t := tensor.New(tensor.WithShape(r, c), tensor.WithBacking(fromFloat64s(dt, v)))
	return gorgonia.NewMatrix(g, dt, gorgonia.WithShape(r, c), gorgonia.WithName(name), gorgonia.WithValue(t))
}

// denseRef computes a(xW + b) in plain Go: x is r×in, W in×out row-major.
func denseRef(x []float64, r, in int, w, b []float64, act Activation) []float64 {
	out := len(b)
	y := make([]float64, r*out)
	for i := range r {
		for j := range out {
			z := b[j]
			for k := range in {
				z += x[i*in+k] * w[k*out+j]
			}
			switch act {
			case ReLU:
				z = math.Max(z, 0)
			case Tanh:
				z = math.Tanh(z)
			case Sigmoid:
				z = 1 / (1 + math.Exp(-z))
			}
			y[i*out+j] = z
		}
	}
	return y
}
