// Package gtest holds helpers shared by the tests of the packages that
// build gorgonia graphs.
package gtest

import (
	"fmt"

	"gorgonia.org/gorgonia"
)

// Float64s returns a float64 copy of a gorgonia value's data (machines own
// their values, so a test must copy what it keeps). It panics on a value
// that holds neither float64 nor float32 data.
func Float64s(v gorgonia.Value) []float64 {
	switch d := v.Data().(type) {
	case []float64:
		return append([]float64(nil), d...)
	case []float32:
		out := make([]float64, len(d))
		for i, x := range d {
			out[i] = float64(x)
		}
		return out
	case float64:
		return []float64{d}
	case float32:
		return []float64{float64(d)}
	}
	panic(fmt.Sprintf("gtest: unexpected value data %T", v.Data()))
}
