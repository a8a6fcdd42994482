package problems

import (
	"errors"
	"fmt"
	"math"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/problems/internal/nprand"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
)

// DefaultXMax is the half-width of the input range of the nonconvex
// optimisation benchmarks: the paper samples x ~ U(−5, 5). (DC3, whose
// linear benchmark the paper follows, samples x ~ U(−1, 1).)
const DefaultXMax = 5

// SineQuadratic is the nonconvex objective of the DC3-family benchmarks,
//
//	f(y) = ½ yᵀQy + pᵀ sin y = Σ_k ½Q_k y_k² + p_k sin y_k,
//
// with Q = diag(Q₁, …, Q_N) positive semidefinite. Its methods are promoted
// by NonconvexLinear and NonconvexQuadratic.
type SineQuadratic struct {
	// Q is the diagonal of Q and P is p, both of length N_O.
	Q, P []float64
}

// Objective returns f(y) for one sample y ∈ ℝ^{N_O}. x is unused (the
// objective does not depend on the input) and may be nil.
func (o SineQuadratic) Objective(x, y []float64) float64 {
	o.checkLen("Objective", y)
	var f float64
	for k, yk := range y {
		f += 0.5*o.Q[k]*yk*yk + o.P[k]*math.Sin(yk)
	}
	return f
}

// ObjectiveGrad writes ∇f(y) = Qy + p ⊙ cos y into grad (length N_O).
// x is unused and may be nil.
func (o SineQuadratic) ObjectiveGrad(x, y, grad []float64) {
	o.checkLen("ObjectiveGrad", y)
	o.checkLen("ObjectiveGrad", grad)
	for k, yk := range y {
		grad[k] = o.Q[k]*yk + o.P[k]*math.Cos(yk)
	}
}

// ObjectiveNode builds f in y's expression graph as one differentiable
// gorgonia operation: for y of shape (batch, N_O) the result has shape
// (batch,), one objective per sample; for y of shape (N_O) it is a scalar.
// The loss of the unsupervised benchmarks is the mean of the result. Its
// gradient with respect to y is one operation too, the upstream gradient
// times Qy + p ⊙ cos y, row by row. Float64 and Float32 graphs are
// supported, with the TapeMachine and the LispMachine; Q and p are
// parameters of the operation (the graph does not merge different
// instances).
//
// Float64 values and gradients are bit for bit those of the chain of
// gorgonia operations Square(y)·(Q/2) + Sin(y)·p (elementwise square and
// sine, matrix–vector products) and its symbolic gradient, which
// ObjectiveNode built before, without the intermediate nodes. Float32
// values and gradients are computed in float64 from the float32 y and
// rounded once, with a fast float32-accurate sine and cosine (more
// accurate than the float32 chain's math32 Sin and Cos and float32 sums,
// which they match to about 1e-6 relative). NaN or infinite entries of y
// give NaN results where the chain did. It returns an error if y is not
// (batch, N_O) or (N_O), or not Float64 or Float32.
func (o SineQuadratic) ObjectiveNode(y *gorgonia.Node) (*gorgonia.Node, error) {
	op, err := newSineQuadOp(o, y.Shape(), y.Dtype())
	if err != nil {
		return nil, err
	}
	return gorgonia.ApplyOp(op, y)
}

// Minimizer returns the unconstrained global minimiser y* of f and f(y*).
// f is separable, and for Q_k ≥ 0 < p_k the minimiser of
// ½Q_k t² + p_k sin t is the unique root in (−π, 0) of Q_k t + p_k cos t
// (found by bisection to full precision): on that interval the second
// derivative Q_k − p_k sin t is positive, and any t outside it has a
// point of equal sine and smaller |t| inside. A p_k = 0 gives y*_k = 0.
// This is what a network trained on f without constraints converges to
// (the paper's MLP rows).
func (o SineQuadratic) Minimizer() (y []float64, f float64) {
	y = make([]float64, len(o.Q))
	for k := range y {
		q, p := o.Q[k], o.P[k]
		if p > 0 {
			lo, hi := -math.Pi, 0.0
			for hi-lo > 1e-15 {
				mid := 0.5 * (lo + hi)
				if q*mid+p*math.Cos(mid) < 0 {
					lo = mid
				} else {
					hi = mid
				}
			}
			y[k] = 0.5 * (lo + hi)
		}
	}
	return y, o.Objective(nil, y)
}

// checkLen panics if len(v) ≠ N_O.
func (o SineQuadratic) checkLen(method string, v []float64) {
	if len(v) != len(o.Q) {
		panic(fmt.Sprintf("problems: SineQuadratic.%s: length %d, want %d", method, len(v), len(o.Q)))
	}
}

// NonconvexLinear is an instance of the DC3 nonconvex benchmark with linear
// equalities (paper §5.3.1, Donti et al. 2021):
//
//	min_y ½yᵀQy + pᵀ sin y   s.t.   Cy = x,
//
// with y ∈ ℝ^{N_O} and x ∈ ℝ^{N_C}. The network learns y(x) without labels:
// the loss is the objective (ObjectiveNode). The paper uses
// (N_O, N_C) = (100, 50), (100, 70) and (200, 150), the instances of DC3's
// generator with seed PaperSeed and x ~ U(−5, 5) (NewNonconvexLinear,
// PaperData), and, following DC3, tests on one batch of the 833 test
// samples; a 2×200 ReLU backbone, batch 200, Adam 1e-4, 1000 epochs and
// tolerances 1e-3 (training mean, inference max). Reference optima (IPOPT)
// in the paper: −11.11, −4.84 and −10.64 at the three sizes.
type NonconvexLinear struct {
	SineQuadratic
	// NO and NC are N_O (outputs) and N_C (constraints, and inputs).
	NO, NC int
	// C is the N_C×N_O constraint matrix.
	C *mat.Dense
	// XMax is the half-width of the input range U(−XMax, XMax) of
	// SampleX and Examples; NewNonconvexLinear sets DefaultXMax.
	XMax float64

	eq     enforce.Constraint
	afterC nprand.RandomState // the generator's state after C, for Examples
}

// PaperSeed is the seed of DC3's instance generator, np.random.seed(17) in
// locuslab/DC3 datasets/simple/make_dataset.py; the ENFORCE paper's
// nonconvex instances are that generator's.
const PaperSeed = 17

// PaperExamples is the number of inputs DC3's generator draws per
// instance (num_examples in datasets/simple/make_dataset.py).
const PaperExamples = 10000

// NewNonconvexLinear draws the instance of DC3's generator
// (locuslab/DC3, datasets/simple/make_dataset.py) for seed: NumPy's legacy
// generator seeded by np.random.seed(seed) (package problems/internal/nprand
// reproduces it), then Q_k = random() for k = 1..N_O, p_k = random(), and
// the entries of C = normal(0, 1) row by row. Examples continues the same
// stream with the inputs. With seed = PaperSeed these are the paper's
// instances. The entries of Q, p and of the inputs are NumPy's bit for
// bit; a few entries of C in 10,000 differ from NumPy's (on glibc) in
// their last bit (see problems/internal/nprand).
//
// It returns an error unless 1 ≤ nC ≤ nO and seed < 2³² (the seeds NumPy
// accepts).
func NewNonconvexLinear(nO, nC int, seed uint64) (*NonconvexLinear, error) {
	if nC < 1 || nO < nC {
		return nil, fmt.Errorf("problems: NewNonconvexLinear: nO = %d, nC = %d, want 1 ≤ nC ≤ nO", nO, nC)
	}
	if seed > math.MaxUint32 {
		return nil, fmt.Errorf("problems: NewNonconvexLinear: seed %d, want seed < 2³² (NumPy's range)", seed)
	}
	rnd, err := nprand.New(int64(seed))
	if err != nil {
		return nil, fmt.Errorf("problems: NewNonconvexLinear: %w", err)
	}
	p := &NonconvexLinear{NO: nO, NC: nC, XMax: DefaultXMax}
	p.Q, p.P = npUniformVec(rnd, nO), npUniformVec(rnd, nO)
	p.C = mat.NewDense(nC, nO, nil)
	raw := p.C.RawMatrix().Data
	for i := range raw {
		raw[i] = rnd.Normal(0, 1)
	}
	p.afterC = *rnd
	if p.eq, err = enforce.Linear(nC, p.C, identityRHS(nC)); err != nil {
		return nil, fmt.Errorf("problems: NewNonconvexLinear: %w", err)
	}
	return p, nil
}

// Examples returns the first n (n ≥ 1) of the inputs DC3's generator
// draws for this instance, X = np.random.uniform(−XMax, XMax, (n, N_C))
// right after C, as an n×N_C matrix: the first rows do not depend on n,
// and Examples(PaperExamples) is DC3's X (with the paper's XMax = 5; DC3
// itself used 1). It panics if n < 1.
func (p *NonconvexLinear) Examples(n int) *mat.Dense {
	if n < 1 {
		panic(fmt.Sprintf("problems: NonconvexLinear.Examples: n = %d, want n ≥ 1", n))
	}
	rnd := p.afterC
	x := mat.NewDense(n, p.NC, nil)
	raw := x.RawMatrix().Data
	for i := range raw {
		raw[i] = rnd.Uniform(-p.XMax, p.XMax)
	}
	return x
}

// DC3Ineq is the number of inequality rows G ∈ ℝ^{50×N_O} that DC3's
// generator (datasets/nonconvex/make_dataset.py, num_ineq) draws after the
// inputs and before it chooses the partial variables; see DC3Partial.
const DC3Ineq = 50

// DC3Partial returns the partial variables DC3 chooses for this instance:
// the N_O − N_C indices of the variables its network predicts, in the
// network's output order, as DC3's NonconvexProblem draws them when its
// generator builds the data set. The generator's stream continues after
// the PaperExamples inputs of Examples with nIneq·N_O normal draws (the
// rows of G; DC3's generator draws DC3Ineq of them) and then draws
// np.random.choice(N_O, N_O − N_C, replace=False), again while
// |det C_o| < 1e-4 for the columns C_o of the other variables (at most
// 100 draws). The result is NumPy's, index for index (tested).
//
// DC3 fixes the choice per data set, so every model trained on it shares
// one conditioning of C_o, which the completion y_o = C_o⁻¹(x − C_p y_p)
// amplifies errors by. The ENFORCE paper's equality-only instances come
// from a variant of DC3's generator that is not published (its parameter
// file holds Q, p and C only), so whether it drew G is not known: nIneq =
// DC3Ineq follows DC3's published code, nIneq = 0 a generator without
// inequalities. At the paper's (100, 50) the two give cond₂(C_o) = 727
// and 49.
//
// It returns an error if nIneq < 0, if p was not built by
// NewNonconvexLinear (it needs the generator's state), or if 100 draws
// all give |det C_o| < 1e-4.
func (p *NonconvexLinear) DC3Partial(nIneq int) ([]int, error) {
	if nIneq < 0 {
		return nil, fmt.Errorf("problems: NonconvexLinear.DC3Partial: nIneq = %d, want nIneq ≥ 0", nIneq)
	}
	if p.C == nil || p.eq == nil {
		return nil, errors.New("problems: NonconvexLinear.DC3Partial: the instance was not built by NewNonconvexLinear")
	}
	rnd := p.afterC
	for range PaperExamples * p.NC {
		rnd.Random()
	}
	for range nIneq * p.NO {
		rnd.StandardNormal()
	}
	co := mat.NewDense(p.NC, p.NC, nil)
	for range 100 {
		partial := rnd.Choice(p.NO, p.NO-p.NC)
		in := make([]bool, p.NO)
		for _, j := range partial {
			in[j] = true
		}
		k := 0
		for j := range p.NO {
			if in[j] {
				continue
			}
			for i := range p.NC {
				co.Set(i, k, p.C.At(i, j))
			}
			k++
		}
		if math.Abs(mat.Det(co)) >= 1e-4 {
			return partial, nil
		}
	}
	return nil, errors.New("problems: NonconvexLinear.DC3Partial: 100 draws of the partial variables left C_o singular (|det| < 1e-4)")
}

// PaperData returns the paper's data for this instance: the
// PaperExamples inputs of Examples split as DC3 splits them (DC3Split):
// the first 8334 rows for training, the next 833 for validation and the
// last 833, the paper's test batch, for testing. The datasets are
// unsupervised (Y is nil).
func (p *NonconvexLinear) PaperData() (train, val, test Dataset) {
	return Dataset{X: p.Examples(PaperExamples)}.Partition(DC3Split(PaperExamples))
}

// DC3Split is DC3's split of n examples (utils.py, valid_frac =
// test_frac = 0.0833), in order, not shuffled: rows
// [0, ⌊n(1 − 0.0833 − 0.0833)⌋) train, up to ⌊n(1 − 0.0833)⌋ validate and
// the rest test, the floors taken of the same floating-point products as
// DC3's, so that n = 10000 gives 8334, 833 and 833. It panics if n < 0.
func DC3Split(n int) Split {
	if n < 0 {
		panic(fmt.Sprintf("problems: DC3Split(%d): want n ≥ 0", n))
	}
	const frac = 0.0833
	trainFrac := 1 - frac - frac
	nTrain := int(float64(n) * trainFrac)
	nVal := int(float64(n)*(trainFrac+frac)) - nTrain
	s := Split{}
	for i := range n {
		switch {
		case i < nTrain:
			s.Train = append(s.Train, i)
		case i < nTrain+nVal:
			s.Val = append(s.Val, i)
		default:
			s.Test = append(s.Test, i)
		}
	}
	return s
}

// Name returns "nonconvex-linear-N_O-N_C".
func (p *NonconvexLinear) Name() string { return fmt.Sprintf("nonconvex-linear-%d-%d", p.NO, p.NC) }

// Dims returns nx = N_C, ny = N_O.
func (p *NonconvexLinear) Dims() (nx, ny int) { return p.NC, p.NO }

// Equalities returns c(x, y) = Cy − x, built with enforce.Linear.
func (p *NonconvexLinear) Equalities() enforce.Constraint { return p.eq }

// Inequalities returns nil: there are none.
func (p *NonconvexLinear) Inequalities() enforce.Constraint { return nil }

// Constraint returns Equalities.
func (p *NonconvexLinear) Constraint() (enforce.Constraint, error) { return p.eq, nil }

// SampleX returns n inputs (n×N_C) with entries x ~ U(−XMax, XMax), drawn
// from a PCG generator seeded by seed. It panics if n < 1.
func (p *NonconvexLinear) SampleX(n int, seed uint64) *mat.Dense {
	return sampleUniform(n, p.NC, p.XMax, seed)
}

// identityRHS returns r(x) = x for x ∈ ℝ^n.
func identityRHS(n int) enforce.RHS {
	return func(x, r, jx []float64) {
		copy(r, x)
		if jx != nil {
			clear(jx)
			for i := range n {
				jx[i*n+i] = 1
			}
		}
	}
}

// sampleUniform returns an n×m matrix of U(−h, h) entries drawn from a
// PCG generator seeded by seed.
func sampleUniform(n, m int, h float64, seed uint64) *mat.Dense {
	if n < 1 {
		panic(fmt.Sprintf("problems: SampleX: n = %d, want n ≥ 1", n))
	}
	rnd := newRand(seed, streamX)
	x := mat.NewDense(n, m, nil)
	raw := x.RawMatrix().Data
	for i := range raw {
		raw[i] = h * (2*rnd.Float64() - 1)
	}
	return x
}

// uniformVec returns n draws from U[0, 1) of a PCG generator.
func uniformVec(rnd interface{ Float64() float64 }, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rnd.Float64()
	}
	return v
}

// npUniformVec returns n draws of NumPy's random().
func npUniformVec(rnd *nprand.RandomState, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rnd.Random()
	}
	return v
}

// normalMat returns an r×c matrix of N(0, 1) draws, filled row by row.
func normalMat(rnd interface{ NormFloat64() float64 }, r, c int) *mat.Dense {
	m := mat.NewDense(r, c, nil)
	raw := m.RawMatrix().Data
	for i := range raw {
		raw[i] = rnd.NormFloat64()
	}
	return m
}
