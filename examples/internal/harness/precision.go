package harness

import (
	"fmt"
	"strings"

	"github.com/enforce-nn/enforce"
)

// PrecisionUsage is the help of every program's -precision flag.
const PrecisionUsage = "arithmetic of the backbone's training and prediction: float64 or float32 (train.Config.Precision; float32 trains about twice as fast; AdaNP's own tolerances are unchanged)"

// precisionValue is a flag.Value that parses "float64" or "float32" into
// an enforce.Precision.
type precisionValue struct{ p *enforce.Precision }

func (v precisionValue) String() string {
	if v.p == nil || *v.p != enforce.Float32 {
		return "float64"
	}
	return "float32"
}

func (v precisionValue) Set(s string) error {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "float64":
		*v.p = enforce.Float64
	case "float32":
		*v.p = enforce.Float32
	default:
		return fmt.Errorf("want float64 or float32, got %q", s)
	}
	return nil
}

// PrecisionVar registers -precision on f: the backbone's precision
// (train.Config.Precision), float64 or float32, stored in p. Common
// registers it; a program with flags of its own calls it directly.
func PrecisionVar(f *Flags, p *enforce.Precision) {
	f.Var(precisionValue{p}, "precision", PrecisionUsage)
}

// ParseGrad reads a -grad flag's value: an enforce.GradMode by its name
// (GradMode.String).
func ParseGrad(s string) (enforce.GradMode, error) {
	for _, g := range []enforce.GradMode{enforce.Unrolled, enforce.Projector, enforce.Implicit, enforce.FinalProjector} {
		if s == g.String() {
			return g, nil
		}
	}
	return 0, fmt.Errorf("-grad %q: want unrolled, projector, implicit or final-projector", s)
}

// ParseSparsePath reads the value of a -path flag that chooses between the
// two sparse paths: "sparse" (enforce.PathSparse) or "augmented"
// (enforce.PathAugmented).
func ParseSparsePath(v string) (enforce.Path, error) {
	switch strings.TrimSpace(v) {
	case "sparse":
		return enforce.PathSparse, nil
	case "augmented":
		return enforce.PathAugmented, nil
	}
	return enforce.PathSparse, fmt.Errorf("want sparse or augmented, got %q", v)
}
