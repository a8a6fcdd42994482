package dc3

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/enforce-nn/enforce/problems"
)

// forwardStats is the network in plain Go with BatchNorm on the given
// statistics and no Dropout.
func forwardStats(net *network, x *mat.Dense, mean, variance [][]float64) *mat.Dense {
	n, _ := x.Dims()
	h := mat.DenseCopyOf(x)
	for l := range net.w {
		in, out := net.sizes[l], net.sizes[l+1]
		z := mat.NewDense(n, out, nil)
		z.Mul(h, mat.NewDense(in, out, values(net.w[l])))
		b := values(net.b[l])
		for r := range n {
			for j := range out {
				v := z.At(r, j) + b[j]
				if l < len(net.w)-1 {
					v = (v-mean[l][j])/math.Sqrt(variance[l][j]+BatchNormEps)*values(net.gamma[l])[j] + values(net.beta[l])[j]
					v = max(v, 0)
				}
				z.Set(r, j, v)
			}
		}
		h = z
	}
	return h
}

// batchStats returns the biased batch mean and variance of every hidden
// layer's pre-activations for x, computed layer by layer with batch
// statistics (training mode without Dropout).
func batchStats(net *network, x *mat.Dense) (mean, variance [][]float64) {
	n, _ := x.Dims()
	h := mat.DenseCopyOf(x)
	for l := range len(net.w) - 1 {
		in, out := net.sizes[l], net.sizes[l+1]
		z := mat.NewDense(n, out, nil)
		z.Mul(h, mat.NewDense(in, out, values(net.w[l])))
		b := values(net.b[l])
		mu, va := make([]float64, out), make([]float64, out)
		col := make([]float64, n)
		for j := range out {
			for r := range n {
				col[r] = z.At(r, j) + b[j]
			}
			mu[j] = stat.Mean(col, nil)
			for _, v := range col {
				va[j] += (v - mu[j]) * (v - mu[j]) / float64(n)
			}
		}
		mean, variance = append(mean, mu), append(variance, va)
		for r := range n {
			for j := range out {
				v := (z.At(r, j)+b[j]-mu[j])/math.Sqrt(va[j]+BatchNormEps)*values(net.gamma[l])[j] + values(net.beta[l])[j]
				z.Set(r, j, max(v, 0))
			}
		}
		h = z
	}
	return mean, variance
}

// forwardBatchStats is the network in training mode without Dropout.
func forwardBatchStats(net *network, x *mat.Dense) *mat.Dense {
	mean, variance := batchStats(net, x)
	return forwardStats(net, x, mean, variance)
}

// TestInitialisation checks NNSolver's initialisation on a 200×200 layer:
// Kaiming normal weights (standard deviation √(2/fan_in) to 2 %, mean
// near 0), biases within ±1/√fan_in, BatchNorm's scale 1 and shift 0,
// running mean 0 and variance 1; and the layer sizes (hidden widths, then
// N_O − N_C outputs).
func TestInitialisation(t *testing.T) {
	p, err := problems.NewNonconvexLinear(120, 50, 1)
	require.NoError(t, err)
	m, err := New(p, Config{Hidden: []int{200, 200}, BatchSize: 10, Quiet: true})
	require.NoError(t, err)
	defer m.Close()
	net := m.net
	assert.Equal(t, []int{50, 200, 200, 70}, net.sizes)
	w := values(net.w[1])
	require.Len(t, w, 200*200)
	mean, sd := stat.MeanStdDev(w, nil)
	assert.InDelta(t, 0, mean, 3*math.Sqrt(2.0/200)/200, "mean")
	assert.InEpsilon(t, math.Sqrt(2.0/200), sd, 0.02, "Kaiming: sd = √(2/fan_in)")
	for l := range net.w {
		bound := 1 / math.Sqrt(float64(net.sizes[l]))
		for _, b := range values(net.b[l]) {
			assert.True(t, math.Abs(b) <= bound, "layer %d: bias %v beyond ±%v", l, b, bound)
		}
	}
	for l := range net.gamma {
		for j := range values(net.gamma[l]) {
			require.Equal(t, 1.0, values(net.gamma[l])[j])
			require.Equal(t, 0.0, values(net.beta[l])[j])
			require.Equal(t, 0.0, net.runMean[l][j])
			require.Equal(t, 1.0, net.runVar[l][j])
		}
	}
}

// TestBatchNormRunningStatistics: one training step on one batch updates
// the running estimates as PyTorch's BatchNorm1d does, from the batch
// statistics of the weights before the step: r_mean = 0.9·0 + 0.1·mean,
// r_var = 0.9·1 + 0.1·var·n/(n − 1).
func TestBatchNormRunningStatistics(t *testing.T) {
	p, err := problems.NewNonconvexLinear(20, 8, 1)
	require.NoError(t, err)
	x := p.SampleX(40, 3)
	m, err := New(p, Config{Hidden: []int{16, 12}, BatchSize: 40, Epochs: 1, Seed: 4, NoDropout: true, Quiet: true})
	require.NoError(t, err)
	defer m.Close()
	mean, variance := batchStats(m.net, x) // the rows' order does not matter
	_, err = m.Fit(x)
	require.NoError(t, err)
	for l := range mean {
		for j := range mean[l] {
			assert.InDelta(t, 0.1*mean[l][j], m.net.runMean[l][j], 1e-12, "layer %d unit %d: running mean", l, j)
			assert.InDelta(t, 0.9+0.1*variance[l][j]*40/39, m.net.runVar[l][j], 1e-12, "layer %d unit %d: running variance", l, j)
		}
	}
}

// TestDropout: in training, Dropout zeroes a fraction 0.2 of the hidden
// units (to within 1 % over 200×64 draws) and scales the others by
// 1/0.8; the training graph's objective changes with the masks, while
// Predict, with Dropout off, is deterministic and equals the plain
// forward pass on the running estimates.
func TestDropout(t *testing.T) {
	p, err := problems.NewNonconvexLinear(20, 8, 1)
	require.NoError(t, err)
	x := p.SampleX(200, 3)
	m, err := New(p, Config{Hidden: []int{64, 64}, BatchSize: 200, Epochs: 1, Seed: 5, Quiet: true})
	require.NoError(t, err)
	defer m.Close()
	require.Len(t, m.net.masks, 2)
	m.net.drawMasks(m.rnd)
	zeros := 0
	mask := m.net.masks[0].Value().Data().([]float64)
	for _, v := range mask {
		if v == 0 {
			zeros++
		} else {
			require.InDelta(t, 1/0.8, v, 1e-15)
		}
	}
	assert.InDelta(t, 0.2, float64(zeros)/float64(len(mask)), 0.01)

	y1, err := m.Predict(x)
	require.NoError(t, err)
	_, err = m.Fit(x)
	require.NoError(t, err)
	a, err := m.Predict(x)
	require.NoError(t, err)
	b, err := m.Predict(x)
	require.NoError(t, err)
	assert.True(t, mat.Equal(a, b), "Predict is deterministic")
	assert.False(t, mat.Equal(y1, a), "the step changed the weights")
	want, err := m.comp.complete(x, forwardStats(m.net, x, m.net.runMean, m.net.runVar))
	require.NoError(t, err)
	assert.True(t, mat.EqualApprox(a, want, 1e-12))
}
