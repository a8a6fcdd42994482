package layers

import (
	"fmt"
	"math"

	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce/internal/graphguard"
)

// Init selects how a Dense layer's weights W (in×out) are drawn. Biases
// always start at zero. Both schemes are uniform, so that float32 and
// float64 layers built with the same seed hold the same weights up to
// rounding.
type Init int

const (
	// DefaultInit picks He for ReLU layers and Glorot for every other
	// activation. For an MLP the choice is made per layer, from the
	// activation that layer applies.
	DefaultInit Init = iota
	// Glorot (Xavier) uniform: W_ij ~ U(−a, a), a = √(6/(in+out)).
	Glorot
	// He (Kaiming) uniform: W_ij ~ U(−a, a), a = √(6/in).
	He
)

// String returns the scheme's name.
func (i Init) String() string {
	switch i {
	case DefaultInit:
		return "default"
	case Glorot:
		return "glorot"
	case He:
		return "he"
	}
	return fmt.Sprintf("Init(%d)", int(i))
}

// bound returns the half-width a of the uniform distribution for a layer
// with the given fan-in, fan-out and activation.
func (i Init) bound(in, out int, act Activation) float64 {
	if i == He || (i == DefaultInit && act == ReLU) {
		return math.Sqrt(6 / float64(in))
	}
	return math.Sqrt(6 / float64(in+out))
}

// Option configures NewDense and NewMLP.
type Option func(*config)

type config struct {
	seed    uint64
	dtype   tensor.Dtype
	init    Init
	name    string
	invalid error
}

func newConfig(opts []Option) (config, error) {
	c := config{dtype: tensor.Float64}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c, c.invalid
}

// WithSeed sets the seed of the weight initialisation (default 0). Weights
// are drawn from math/rand/v2's PCG source seeded with (seed, layer index):
// the same seed always gives the same weights, on every platform.
func WithSeed(seed uint64) Option {
	return func(c *config) { c.seed = seed }
}

// WithDtype sets the dtype of the weights (default tensor.Float64). Only
// tensor.Float64 and tensor.Float32 are supported; the input of Forward must
// have the same dtype.
func WithDtype(dt tensor.Dtype) Option {
	return func(c *config) {
		if err := graphguard.CheckFloat(dt); err != nil && c.invalid == nil {
			c.invalid = fmt.Errorf("layers: WithDtype: %w", err)
		}
		c.dtype = dt
	}
}

// WithInit sets the weight initialisation scheme (default DefaultInit).
func WithInit(i Init) Option {
	return func(c *config) {
		if (i < DefaultInit || i > He) && c.invalid == nil {
			c.invalid = fmt.Errorf("layers: WithInit: invalid %v", i)
		}
		c.init = i
	}
}

// WithName sets the prefix of the names of the learnable nodes. A Dense
// layer named p has nodes "p.W" and "p.b"; layer i of an MLP named p has
// nodes "p.i.W" and "p.i.b". The names must not already be in the graph.
// Without WithName a free prefix is chosen: "dense", "dense_1", … for Dense
// and "mlp", "mlp_1", … for MLP.
func WithName(prefix string) Option {
	return func(c *config) {
		if prefix == "" && c.invalid == nil {
			c.invalid = fmt.Errorf("layers: WithName: empty prefix")
		}
		c.name = prefix
	}
}
