package layers

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// vectorConstant adds to g a constant vector holding v converted to dt. The
// constant is named after its content: gorgonia merges constants by name,
// so equal content must give equal names and different content different
// names.
func vectorConstant(g *gorgonia.ExprGraph, dt tensor.Dtype, label string, v []float64) *gorgonia.Node {
	h := fnv.New64a()
	h.Write([]byte(dt.String()))
	var buf [8]byte
	for _, x := range v {
		binary.LittleEndian.PutUint64(buf[:], math.Float64bits(x))
		h.Write(buf[:])
	}
	name := fmt.Sprintf("layers.%s[%d:%016x]", label, len(v), h.Sum64())
	t := tensor.New(tensor.WithShape(len(v)), tensor.WithBacking(fromFloat64s(dt, v)))
	return g.AddNode(gorgonia.NewConstant(t, gorgonia.WithName(name)))
}

// fromFloat64s returns a fresh backing slice of dtype dt holding v.
func fromFloat64s(dt tensor.Dtype, v []float64) any {
	if dt == tensor.Float32 {
		out := make([]float32, len(v))
		for i, x := range v {
			out[i] = float32(x)
		}
		return out
	}
	return append([]float64(nil), v...)
}
