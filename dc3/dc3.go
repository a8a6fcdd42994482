// Package dc3 is the DC3 baseline (Donti, Rolnick & Kolter, "DC3: A
// learning method for optimization with hard constraints", ICLR 2021) for
// the ENFORCE paper's nonconvex benchmark with linear equalities (§5.3.1):
//
//	min_y ½yᵀQy + pᵀ sin y   s.t.   Cy = x.
//
// Equality completion: a backbone MLP predicts the N_O − N_C "partial"
// variables y_p; the other N_C variables are completed by solving
// C_o y_o = x − C_p y_p, where C_p and C_o are the columns of C of the
// partial and the other variables, so every prediction satisfies Cy = x up
// to rounding. The completion is linear, y = xK_x + y_pK_y with constant
// matrices, and enters the gorgonia graph as two matrix products, so the
// objective's gradient flows through it exactly. The loss is the mean
// objective (DC3's soft penalty on the equalities is identically zero up to
// rounding after completion and is left out).
//
// Gradient-based correction, DC3's second ingredient, moves the partial
// variables along the gradient of the inequality violation; the paper's
// problems have no inequalities, so correction is a no-op there and is
// not implemented. The quadratic benchmark (§5.3.2) would need Newton
// completion with an implicit-function gradient; the ENFORCE paper does
// not report DC3 there either, and this package does not provide it.
package dc3

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"time"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
)

// Config configures a Model. Zero fields mean the defaults stated.
type Config struct {
	// Hidden are the widths of the hidden layers (default [200, 200], the
	// paper's backbone), with ReLU activations and package layers' default
	// initialisation (He uniform, zero biases).
	Hidden []int
	// LearnRate is Adam's step size (default 1e-4, the paper's).
	LearnRate float64
	// BatchSize is the number of samples per step (default 200). An epoch
	// drops the last incomplete batch of its shuffled order.
	BatchSize int
	// Epochs is the number of passes per Fit call (default 3500, the
	// paper's DC3 setting).
	Epochs int
	// Seed seeds the choice of partial variables, the weights and the
	// shuffling.
	Seed uint64
	// Progress receives one line per LogEvery epochs (default os.Stderr,
	// every ⌈Epochs/20⌉); Quiet suppresses it.
	Progress io.Writer
	Quiet    bool
	LogEvery int
}

// Model is a DC3 network for one NonconvexLinear instance.
type Model struct {
	cfg      Config
	p        *problems.NonconvexLinear
	partial  []int      // indices of the predicted variables
	kx, ky   *mat.Dense // y = x·Kx + y_p·Ky
	g        *gorgonia.ExprGraph
	mlp      *layers.MLP
	x, loss  *gorgonia.Node
	vm       gorgonia.VM
	solver   gorgonia.Solver
	rnd      *rand.Rand
	trainDur time.Duration
}

// Epoch is one epoch of training: the mean objective over its batches,
// measured before each step.
type Epoch struct {
	Epoch     int
	Objective float64
}

// New builds a DC3 model for p. The partial variables are N_O − N_C
// columns of C chosen uniformly at random from Seed, as in DC3's code; it
// returns an error if the remaining square block C_o is numerically
// singular (condition number above 1e12).
func New(p *problems.NonconvexLinear, cfg Config) (*Model, error) {
	if p == nil {
		return nil, errors.New("dc3: nil problem")
	}
	if p.NC >= p.NO {
		return nil, fmt.Errorf("dc3: N_C = %d ≥ N_O = %d leaves nothing to predict", p.NC, p.NO)
	}
	if cfg.Hidden == nil {
		cfg.Hidden = []int{200, 200}
	}
	if cfg.LearnRate == 0 {
		cfg.LearnRate = 1e-4
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = 200
	}
	if cfg.Epochs == 0 {
		cfg.Epochs = 3500
	}
	if cfg.LogEvery == 0 {
		cfg.LogEvery = (cfg.Epochs + 19) / 20
	}
	if cfg.Progress == nil {
		cfg.Progress = os.Stderr
	}
	if !(cfg.LearnRate > 0) || cfg.BatchSize < 0 || cfg.Epochs < 0 || cfg.LogEvery < 0 {
		return nil, fmt.Errorf("dc3: invalid Config (LearnRate %v, BatchSize %d, Epochs %d, LogEvery %d)",
			cfg.LearnRate, cfg.BatchSize, cfg.Epochs, cfg.LogEvery)
	}
	for _, h := range cfg.Hidden {
		if h <= 0 {
			return nil, fmt.Errorf("dc3: hidden widths must be positive, got %v", cfg.Hidden)
		}
	}
	m := &Model{cfg: cfg, p: p, rnd: rand.New(rand.NewPCG(cfg.Seed, 0xdc3))}
	perm := m.rnd.Perm(p.NO)
	k := p.NO - p.NC
	m.partial = perm[:k]
	other := perm[k:]
	co := mat.NewDense(p.NC, p.NC, nil)
	cp := mat.NewDense(p.NC, k, nil)
	for i := range p.NC {
		for j, col := range other {
			co.Set(i, j, p.C.At(i, col))
		}
		for j, col := range m.partial {
			cp.Set(i, j, p.C.At(i, col))
		}
	}
	var lu mat.LU
	lu.Factorize(co)
	if lu.Cond() > 1e12 {
		return nil, errors.New("dc3: the completed block of C is numerically singular")
	}
	// y_o = C_o⁻¹x − C_o⁻¹C_p y_p, scattered into y.
	var inv, m2 mat.Dense
	if err := inv.Inverse(co); err != nil {
		return nil, fmt.Errorf("dc3: %w", err)
	}
	m2.Mul(&inv, cp)
	m.kx = mat.NewDense(p.NC, p.NO, nil)
	m.ky = mat.NewDense(k, p.NO, nil)
	for j, col := range other {
		for i := range p.NC {
			m.kx.Set(i, col, inv.At(j, i))
		}
		for i := range k {
			m.ky.Set(i, col, -m2.At(j, i))
		}
	}
	for i, col := range m.partial {
		m.ky.Set(i, col, 1)
	}
	if err := m.build(); err != nil {
		return nil, err
	}
	return m, nil
}

// build adds the training graph for one batch.
func (m *Model) build() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("dc3: building the graph: gorgonia panicked: %v", r)
		}
	}()
	p, bs := m.p, m.cfg.BatchSize
	m.g = gorgonia.NewGraph()
	sizes := append(append([]int{p.NC}, m.cfg.Hidden...), p.NO-p.NC)
	if m.mlp, err = layers.NewMLP(m.g, sizes, layers.ReLU, layers.Identity, layers.WithSeed(int64(m.cfg.Seed))); err != nil {
		return err
	}
	m.x = gorgonia.NewMatrix(m.g, tensor.Float64, gorgonia.WithShape(bs, p.NC), gorgonia.WithName("x"))
	yp, err := m.mlp.Forward(m.x)
	if err != nil {
		return err
	}
	kx := gorgonia.NewMatrix(m.g, tensor.Float64, gorgonia.WithName("Kx"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(m.kx.Dims()), tensor.WithBacking(m.kx.RawMatrix().Data))))
	ky := gorgonia.NewMatrix(m.g, tensor.Float64, gorgonia.WithName("Ky"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(m.ky.Dims()), tensor.WithBacking(m.ky.RawMatrix().Data))))
	y := gorgonia.Must(gorgonia.Add(gorgonia.Must(gorgonia.Mul(m.x, kx)), gorgonia.Must(gorgonia.Mul(yp, ky))))
	f, err := p.ObjectiveNode(y)
	if err != nil {
		return err
	}
	if m.loss, err = gorgonia.Mean(f); err != nil {
		return err
	}
	if _, err = gorgonia.Grad(m.loss, m.mlp.Learnables()...); err != nil {
		return err
	}
	m.vm = gorgonia.NewTapeMachine(m.g, gorgonia.BindDualValues(m.mlp.Learnables()...))
	m.solver = gorgonia.NewAdamSolver(gorgonia.WithLearnRate(m.cfg.LearnRate))
	return nil
}

// Partial returns the indices of the variables the network predicts.
func (m *Model) Partial() []int { return append([]int(nil), m.partial...) }

// TrainTime returns the wall-clock time spent in Fit so far.
func (m *Model) TrainTime() time.Duration { return m.trainDur }

// Fit trains on the inputs x (n×N_C, n ≥ BatchSize) for Config.Epochs
// epochs of shuffled batches, one Adam step per batch, and returns the
// per-epoch mean objective. It returns an error for bad input or when the
// objective becomes non-finite.
func (m *Model) Fit(x *mat.Dense) ([]Epoch, error) {
	n, nx := x.Dims()
	bs := m.cfg.BatchSize
	if nx != m.p.NC || n < bs {
		return nil, fmt.Errorf("dc3: Fit: x is %d×%d, want at least %d rows of %d", n, nx, bs, m.p.NC)
	}
	start := time.Now()
	defer func() { m.trainDur += time.Since(start) }()
	xb := tensor.New(tensor.WithShape(bs, nx), tensor.WithBacking(make([]float64, bs*nx)))
	buf := xb.Data().([]float64)
	var hist []Epoch
	for e := 1; e <= m.cfg.Epochs; e++ {
		order := m.rnd.Perm(n)
		sum, steps := 0.0, 0
		for b := 0; b+bs <= n; b += bs {
			for i, r := range order[b : b+bs] {
				copy(buf[i*nx:(i+1)*nx], x.RawRowView(r))
			}
			if err := gorgonia.Let(m.x, xb); err != nil {
				return hist, fmt.Errorf("dc3: %w", err)
			}
			if err := m.vm.RunAll(); err != nil {
				return hist, fmt.Errorf("dc3: %w", err)
			}
			loss := m.loss.Value().Data().(float64)
			if math.IsNaN(loss) || math.IsInf(loss, 0) {
				return hist, fmt.Errorf("dc3: epoch %d: the objective is %v", e, loss)
			}
			sum += loss
			steps++
			if err := m.solver.Step(gorgonia.NodesToValueGrads(m.mlp.Learnables())); err != nil {
				return hist, fmt.Errorf("dc3: %w", err)
			}
			m.vm.Reset()
		}
		hist = append(hist, Epoch{Epoch: e, Objective: sum / float64(steps)})
		if !m.cfg.Quiet && (e%m.cfg.LogEvery == 0 || e == m.cfg.Epochs) {
			fmt.Fprintf(m.cfg.Progress, "dc3 epoch %5d  objective %.5f  (%v)\n", e, sum/float64(steps), time.Since(start).Round(time.Millisecond))
		}
	}
	return hist, nil
}

// Predict returns the completed predictions y (n×N_O) for inputs x,
// computed in plain Go from the current weights: Cy = x up to rounding.
func (m *Model) Predict(x *mat.Dense) (*mat.Dense, error) {
	n, nx := x.Dims()
	if nx != m.p.NC {
		return nil, fmt.Errorf("dc3: Predict: x has %d columns, want %d", nx, m.p.NC)
	}
	w := m.mlp.Weights()
	h := mat.DenseCopyOf(x)
	nl := len(w) / 2
	for l := range nl {
		b := w[2*l+1]
		in, out := len(w[2*l])/len(b), len(b)
		z := mat.NewDense(n, out, nil)
		z.Mul(h, mat.NewDense(in, out, w[2*l]))
		raw := z.RawMatrix().Data
		for r := range n {
			row := raw[r*out : (r+1)*out]
			for j := range row {
				row[j] += b[j]
				if l < nl-1 && row[j] < 0 {
					row[j] = 0
				}
			}
		}
		h = z
	}
	y := mat.NewDense(n, m.p.NO, nil)
	y.Mul(x, m.kx)
	var t mat.Dense
	t.Mul(h, m.ky)
	y.Add(y, &t)
	return y, nil
}

// Close releases the training machine.
func (m *Model) Close() error { return m.vm.Close() }
