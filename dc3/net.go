package dc3

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// network is DC3's NNSolver backbone: for each hidden width
// Linear → BatchNorm1d → ReLU → Dropout, then a Linear output layer. In
// the training graph BatchNorm uses the batch's statistics; predict uses
// the running estimates that updateRunning keeps, and no Dropout.
type network struct {
	sizes   []int // inputs, hidden widths, outputs
	bs      int
	dropout float64
	// w[l] (sizes[l]×sizes[l+1]) and b[l] (1×sizes[l+1]) are the Linear
	// layers; gamma[l] and beta[l] (1×sizes[l+1]) BatchNorm's scale and
	// shift for the hidden layers.
	w, b, gamma, beta []*gorgonia.Node
	// masks[l] (bs×sizes[l+1]) is the dropout mask of hidden layer l,
	// 0 or 1/(1 − dropout); nil when dropout = 0.
	masks []*gorgonia.Node
	// batchMean, batchVar receive each run's batch statistics of the hidden
	// layers (the variance biased, as used to normalise).
	batchMean, batchVar []gorgonia.Value
	// runMean, runVar are BatchNorm's running estimates.
	runMean, runVar [][]float64
}

// newNetwork adds the parameters of a network with the given layer sizes
// to g, initialised as NNSolver's from rnd: Kaiming normal weights
// N(0, 2/fan_in), biases U(−1/√fan_in, 1/√fan_in), BatchNorm scale 1,
// shift 0, running mean 0 and variance 1.
func newNetwork(g *gorgonia.ExprGraph, sizes []int, bs int, dropout float64, rnd *rand.Rand) (*network, error) {
	if len(sizes) < 2 {
		return nil, fmt.Errorf("dc3: network sizes %v: want at least inputs and outputs", sizes)
	}
	for _, s := range sizes {
		if s < 1 {
			return nil, fmt.Errorf("dc3: layer sizes must be positive, got %v", sizes)
		}
	}
	nl := len(sizes) - 1
	net := &network{sizes: sizes, bs: bs, dropout: dropout}
	for l := range nl {
		in, out := sizes[l], sizes[l+1]
		w := make([]float64, in*out)
		sd := math.Sqrt(2 / float64(in))
		for i := range w {
			w[i] = sd * rnd.NormFloat64()
		}
		b := make([]float64, out)
		bound := 1 / math.Sqrt(float64(in))
		for i := range b {
			b[i] = bound * (2*rnd.Float64() - 1)
		}
		net.w = append(net.w, param(g, fmt.Sprintf("W%d", l), in, out, w))
		net.b = append(net.b, param(g, fmt.Sprintf("b%d", l), 1, out, b))
		if l == nl-1 {
			break
		}
		ones := make([]float64, out)
		for i := range ones {
			ones[i] = 1
		}
		net.gamma = append(net.gamma, param(g, fmt.Sprintf("gamma%d", l), 1, out, ones))
		net.beta = append(net.beta, param(g, fmt.Sprintf("beta%d", l), 1, out, make([]float64, out)))
		net.runMean = append(net.runMean, make([]float64, out))
		net.runVar = append(net.runVar, append([]float64(nil), ones...))
		if dropout > 0 {
			net.masks = append(net.masks, gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(bs, out),
				gorgonia.WithName(fmt.Sprintf("dropout%d", l)), gorgonia.WithValue(tensor.New(tensor.WithShape(bs, out), tensor.WithBacking(make([]float64, bs*out))))))
		}
	}
	net.batchMean = make([]gorgonia.Value, nl-1)
	net.batchVar = make([]gorgonia.Value, nl-1)
	return net, nil
}

// param returns a learnable r×c matrix node holding v.
func param(g *gorgonia.ExprGraph, name string, r, c int, v []float64) *gorgonia.Node {
	return gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(r, c), gorgonia.WithName(name),
		gorgonia.WithValue(tensor.New(tensor.WithShape(r, c), tensor.WithBacking(v))))
}

// learnables returns the trained parameters.
func (net *network) learnables() gorgonia.Nodes {
	var ps gorgonia.Nodes
	for l := range net.w {
		ps = append(ps, net.w[l], net.b[l])
		if l < len(net.gamma) {
			ps = append(ps, net.gamma[l], net.beta[l])
		}
	}
	return ps
}

// forward adds the training-mode network applied to x (bs×inputs).
func (net *network) forward(x *gorgonia.Node) (*gorgonia.Node, error) {
	h := x
	rows := []byte{0}
	for l := range net.w {
		z, err := gorgonia.Mul(h, net.w[l])
		if err != nil {
			return nil, err
		}
		if z, err = gorgonia.BroadcastAdd(z, net.b[l], nil, rows); err != nil {
			return nil, err
		}
		if l == len(net.w)-1 {
			return z, nil
		}
		out := net.sizes[l+1]
		mean, err := gorgonia.Mean(z, 0)
		if err != nil {
			return nil, err
		}
		if mean, err = gorgonia.Reshape(mean, tensor.Shape{1, out}); err != nil {
			return nil, err
		}
		cen, err := gorgonia.BroadcastSub(z, mean, nil, rows)
		if err != nil {
			return nil, err
		}
		sq, err := gorgonia.Square(cen)
		if err != nil {
			return nil, err
		}
		variance, err := gorgonia.Mean(sq, 0)
		if err != nil {
			return nil, err
		}
		if variance, err = gorgonia.Reshape(variance, tensor.Shape{1, out}); err != nil {
			return nil, err
		}
		gorgonia.Read(mean, &net.batchMean[l])
		gorgonia.Read(variance, &net.batchVar[l])
		veps, err := gorgonia.Add(variance, gorgonia.NewConstant(BatchNormEps))
		if err != nil {
			return nil, err
		}
		sd, err := gorgonia.Sqrt(veps)
		if err != nil {
			return nil, err
		}
		if h, err = gorgonia.BroadcastHadamardDiv(cen, sd, nil, rows); err != nil {
			return nil, err
		}
		if h, err = gorgonia.BroadcastHadamardProd(h, net.gamma[l], nil, rows); err != nil {
			return nil, err
		}
		if h, err = gorgonia.BroadcastAdd(h, net.beta[l], nil, rows); err != nil {
			return nil, err
		}
		if h, err = gorgonia.Rectify(h); err != nil {
			return nil, err
		}
		if net.masks != nil {
			if h, err = gorgonia.HadamardProd(h, net.masks[l]); err != nil {
				return nil, err
			}
		}
	}
	return h, nil
}

// drawMasks fills the dropout masks for the next run: each entry is 0
// with probability dropout and 1/(1 − dropout) otherwise.
func (net *network) drawMasks(rnd *rand.Rand) {
	keep := 1 / (1 - net.dropout)
	for _, m := range net.masks {
		for i, data := 0, m.Value().Data().([]float64); i < len(data); i++ {
			if rnd.Float64() < net.dropout {
				data[i] = 0
			} else {
				data[i] = keep
			}
		}
	}
}

// updateRunning folds the last run's batch statistics into the running
// estimates, with the unbiased variance as PyTorch does.
func (net *network) updateRunning() {
	const mom = BatchNormMomentum
	unbias := float64(net.bs) / float64(net.bs-1)
	for l := range net.runMean {
		mean := net.batchMean[l].Data().([]float64)
		variance := net.batchVar[l].Data().([]float64)
		for j := range net.runMean[l] {
			net.runMean[l][j] = (1-mom)*net.runMean[l][j] + mom*mean[j]
			net.runVar[l][j] = (1-mom)*net.runVar[l][j] + mom*unbias*variance[j]
		}
	}
}

// values returns the data of a parameter node.
func values(n *gorgonia.Node) []float64 { return n.Value().Data().([]float64) }

// predict returns the network's outputs for x (n×inputs) in evaluation
// mode: BatchNorm with the running estimates, no Dropout.
func (net *network) predict(x *mat.Dense) *mat.Dense {
	n, _ := x.Dims()
	h := mat.DenseCopyOf(x)
	for l := range net.w {
		in, out := net.sizes[l], net.sizes[l+1]
		z := mat.NewDense(n, out, nil)
		z.Mul(h, mat.NewDense(in, out, values(net.w[l])))
		b := values(net.b[l])
		last := l == len(net.w)-1
		var scale, shift []float64
		if !last {
			gamma, beta := values(net.gamma[l]), values(net.beta[l])
			scale, shift = make([]float64, out), make([]float64, out)
			for j := range out {
				scale[j] = gamma[j] / math.Sqrt(net.runVar[l][j]+BatchNormEps)
				shift[j] = beta[j] - net.runMean[l][j]*scale[j]
			}
		}
		raw := z.RawMatrix().Data
		for r := range n {
			row := raw[r*out : (r+1)*out]
			for j := range row {
				row[j] += b[j]
				if !last {
					row[j] = max(0, row[j]*scale[j]+shift[j])
				}
			}
		}
		h = z
	}
	return h
}
