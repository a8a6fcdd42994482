// Package graphguard holds the checks shared by the packages that build
// gorgonia graphs: gorgonia panics on many misuses, and this project's
// builders return errors instead.
package graphguard

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Recover turns a panic raised by gorgonia (or by user code it calls) while
// building a graph into an error, and clears the node being returned. Defer
// it at every exported entry point that calls into gorgonia.
func Recover(n **gorgonia.Node, err *error, where string) {
	if r := recover(); r != nil {
		*n = nil
		*err = fmt.Errorf("%s: gorgonia panicked while building the graph: %v", where, r)
	}
}

// CheckFloat reports whether dt is a floating-point dtype gorgonia
// differentiates: Float64 or Float32.
func CheckFloat(dt tensor.Dtype) error {
	if dt != tensor.Float64 && dt != tensor.Float32 {
		return fmt.Errorf("dtype %v is not supported (want Float64 or Float32)", dt)
	}
	return nil
}
