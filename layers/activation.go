package layers

import (
	"fmt"
	"strings"

	"gorgonia.org/gorgonia"

	"github.com/enforce-nn/enforce/internal/graphguard"
)

// Activation is a pointwise nonlinearity applied after a Dense layer's
// affine map. The zero value is Identity.
type Activation int

const (
	// Identity is a(z) = z.
	Identity Activation = iota
	// ReLU is a(z) = max(z, 0); its derivative at 0 is taken as 1
	// (gorgonia's ⩾ convention), except in a float32 Dense layer, whose
	// fused operation reads the derivative from a(z) and takes it as 0.
	ReLU
	// Tanh is a(z) = tanh z.
	Tanh
	// Sigmoid is a(z) = 1/(1+e^{−z}).
	Sigmoid
)

var activationNames = [...]string{
	Identity: "identity",
	ReLU:     "relu",
	Tanh:     "tanh",
	Sigmoid:  "sigmoid",
}

// String returns the activation's name: "identity", "relu", "tanh" or
// "sigmoid". ParseActivation inverts it.
func (a Activation) String() string {
	if a.valid() {
		return activationNames[a]
	}
	return fmt.Sprintf("Activation(%d)", int(a))
}

func (a Activation) valid() bool { return a >= 0 && int(a) < len(activationNames) }

// ParseActivation returns the activation named s, as written by String.
// Case is ignored.
func ParseActivation(s string) (Activation, error) {
	l := strings.ToLower(strings.TrimSpace(s))
	for a, name := range activationNames {
		if l == name {
			return Activation(a), nil
		}
	}
	return 0, fmt.Errorf("layers: unknown activation %q (want identity, relu, tanh or sigmoid)", s)
}

// MarshalText implements encoding.TextMarshaler with the activation's name.
func (a Activation) MarshalText() ([]byte, error) {
	if !a.valid() {
		return nil, fmt.Errorf("layers: cannot marshal invalid %v", a)
	}
	return []byte(a.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler; see ParseActivation.
func (a *Activation) UnmarshalText(text []byte) error {
	v, err := ParseActivation(string(text))
	if err != nil {
		return err
	}
	*a = v
	return nil
}

// Apply adds the activation of x to x's graph. Identity returns x itself.
func (a Activation) Apply(x *gorgonia.Node) (out *gorgonia.Node, err error) {
	if x == nil {
		return nil, fmt.Errorf("layers: %v.Apply: nil node", a)
	}
	defer graphguard.Recover(&out, &err, "layers: "+a.String())
	switch a {
	case Identity:
		return x, nil
	case ReLU:
		return gorgonia.Rectify(x)
	case Tanh:
		return gorgonia.Tanh(x)
	case Sigmoid:
		return gorgonia.Sigmoid(x)
	}
	return nil, fmt.Errorf("layers: invalid %v", a)
}
