// Command backbone trains ENFORCE with a backbone that is not an MLP: a
// small residual network built from layers.Dense with skip connections,
//
//	h₀ = tanh(x W_in + b_in),  h_{k+1} = h_k + tanh(h_k W_k + b_k),  ŷ = h_K W_out + b_out,
//
// handed to package train as a train.BackboneFunc. AdaNP projects ŷ onto
// the paper's fitting constraint (§5.1), c(x, y) = (½y₁)² + x² + y₂ = 0,
// during training and inference; the program prints the test MSE and
// max|c| of the backbone output ŷ and of ENFORCE's ỹ, saves the model,
// loads it back with train.LoadBackbone and checks that it predicts the
// same bits.
//
//	go run ./examples/backbone          # about 10 s on 2 cores
//	go run ./examples/backbone -quick   # about 2 s
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"time"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"

	"github.com/enforce-nn/enforce/examples/internal/harness"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
	"github.com/enforce-nn/enforce/train"
)

// residualNet is the backbone. It implements train.Backbone (Forward and
// Learnables, on a gorgonia graph) and train.DensePredictor (Predict, in
// plain Go), so that predictions need no graph.
type residualNet struct {
	in     *layers.Dense
	blocks []*layers.Dense
	out    *layers.Dense
}

// newResidualNet adds a residual network 1 → width (blocks residual
// blocks) → 2 to g, with weights drawn from seed.
func newResidualNet(g *gorgonia.ExprGraph, width, blocks int, seed uint64) (*residualNet, error) {
	var r residualNet
	var err error
	if r.in, err = layers.NewDense(g, 1, width, layers.Tanh, layers.WithSeed(seed), layers.WithName("in")); err != nil {
		return nil, err
	}
	for k := range blocks {
		b, err := layers.NewDense(g, width, width, layers.Tanh, layers.WithSeed(seed+1+uint64(k)), layers.WithName(fmt.Sprintf("block%d", k)))
		if err != nil {
			return nil, err
		}
		r.blocks = append(r.blocks, b)
	}
	if r.out, err = layers.NewDense(g, width, 2, layers.Identity, layers.WithSeed(seed-1), layers.WithName("out")); err != nil {
		return nil, err
	}
	return &r, nil
}

// Forward adds the network to x's graph.
func (r *residualNet) Forward(x *gorgonia.Node) (*gorgonia.Node, error) {
	h, err := r.in.Forward(x)
	if err != nil {
		return nil, err
	}
	for _, b := range r.blocks {
		z, err := b.Forward(h)
		if err != nil {
			return nil, err
		}
		if h, err = gorgonia.Add(h, z); err != nil { // the skip connection
			return nil, err
		}
	}
	return r.out.Forward(h)
}

// Learnables returns the weights and biases of every layer.
func (r *residualNet) Learnables() gorgonia.Nodes {
	ns := r.in.Learnables()
	for _, b := range r.blocks {
		ns = append(ns, b.Learnables()...)
	}
	return append(ns, r.out.Learnables()...)
}

// Predict evaluates the network in plain Go from the current weights.
func (r *residualNet) Predict(x *mat.Dense) (*mat.Dense, error) {
	h, err := r.in.Predict(x)
	if err != nil {
		return nil, err
	}
	for _, b := range r.blocks {
		z, err := b.Predict(h)
		if err != nil {
			return nil, err
		}
		h.Add(h, z)
	}
	return r.out.Predict(h)
}

// options are the command-line settings.
type options struct {
	n, nTest, width, blocks, epochs int
	lr                              float64
	seed                            uint64
}

// defaults returns the program's default setting.
func defaults() options {
	return options{n: 200, nTest: 10000, width: 32, blocks: 2, epochs: 3000, lr: 3e-3, seed: 1}
}

// flags registers the command line on o; -quick is a run of about 2 s.
func flags(o *options) *harness.Flags {
	f := harness.New("backbone", "ENFORCE with a residual backbone (train.Config.Backbone) on the paper's fitting problem; saves and reloads the model.")
	f.IntVar(&o.n, "n", o.n, "training points")
	f.IntVar(&o.nTest, "ntest", o.nTest, "test points")
	f.IntVar(&o.width, "width", o.width, "width of the residual blocks")
	f.IntVar(&o.blocks, "blocks", o.blocks, "number of residual blocks")
	f.IntVar(&o.epochs, "epochs", o.epochs, "full-batch Adam steps")
	f.Float64Var(&o.lr, "lr", o.lr, "Adam learning rate")
	f.Uint64Var(&o.seed, "seed", o.seed, "seed of the data and the weights")
	f.Quick("ntest", "2000").Quick("width", "16").Quick("epochs", "1000").Quick("lr", "1e-2")
	return f
}

// result is what run measured on the test set.
type result struct {
	mseHat, mseTilde       float64 // MSE of ŷ and ỹ
	maxHat, maxTilde       float64 // max|c| of ŷ and ỹ
	depth                  float64 // mean AdaNP depth at inference
	projected              float64 // fraction of training batches projected in the last epoch
	sameAfterLoad          bool
	trainTime, predictTime time.Duration
}

func main() { os.Exit(cli(os.Args[1:], os.Stdout, os.Stderr)) }

// cli runs the command with the arguments args and returns its exit status.
func cli(args []string, stdout, stderr io.Writer) int {
	o := defaults()
	f := flags(&o)
	return f.Main(args, stderr, func() error {
		f.PrintSmoke(stdout)
		_, err := run(stdout, o)
		return err
	})
}

// run trains and evaluates the model, printing a report to w.
func run(w io.Writer, o options) (result, error) {
	var res result
	p := problems.FittingEquality{}
	trainSet, testSet := p.Sample(o.n, o.seed), p.Sample(o.nTest, o.seed+1)
	build := func(g *gorgonia.ExprGraph) (train.Backbone, error) {
		return newResidualNet(g, o.width, o.blocks, o.seed)
	}
	model, err := train.New(train.Config{
		Backbone:    build, // Sizes, Hidden and Output describe an MLP: left unset
		Constraint:  p.Equalities(),
		LearnRate:   o.lr,
		Epochs:      o.epochs,
		Seed:        o.seed,
		Standardize: true,
		Quiet:       true,
	})
	if err != nil {
		return res, err
	}
	fmt.Fprintf(w, "ENFORCE with a residual backbone (1 → %d, %d residual blocks → 2) on the fitting problem\n", o.width, o.blocks)
	fmt.Fprintf(w, "%d training points, %d full-batch Adam epochs (lr %g), %d test points\n", o.n, o.epochs, o.lr, o.nTest)

	start := time.Now()
	hist, err := model.Fit(trainSet.X, trainSet.Y)
	if err != nil {
		return res, err
	}
	res.trainTime = time.Since(start)
	res.projected = hist.Last().Projected

	yhat, err := model.Backbone(testSet.X)
	if err != nil {
		return res, err
	}
	start = time.Now()
	ytilde, stats, err := model.Predict(testSet.X)
	if err != nil {
		return res, err
	}
	res.predictTime = time.Since(start)
	hatStats, err := model.InferAdaNP().Check(testSet.X, yhat)
	if err != nil {
		return res, err
	}
	res.mseHat, res.mseTilde = mse(yhat, testSet.Y), mse(ytilde, testSet.Y)
	res.maxHat, res.maxTilde = hatStats.After.Max, stats.After.Max
	res.depth = stats.MeanDepth

	var buf bytes.Buffer
	if err := model.Save(&buf); err != nil {
		return res, err
	}
	loaded, err := train.LoadBackbone(&buf, p.Equalities(), build)
	if err != nil {
		return res, err
	}
	again, _, err := loaded.Predict(testSet.X)
	if err != nil {
		return res, err
	}
	res.sameAfterLoad = mat.Equal(again, ytilde)

	fmt.Fprintf(w, "trained in %v (last epoch: %.0f%% of batches projected)\n\n", res.trainTime.Round(time.Millisecond), 100*res.projected)
	fmt.Fprintf(w, "%-24s %10s %10s\n", "test set", "MSE", "max|c|")
	fmt.Fprintf(w, "%-24s %10.3e %10.1e\n", "backbone output ŷ", res.mseHat, res.maxHat)
	fmt.Fprintf(w, "%-24s %10.3e %10.1e   (AdaNP mean depth %.2f, %v)\n", "ENFORCE ỹ = AdaNP(ŷ)", res.mseTilde, res.maxTilde, res.depth, res.predictTime.Round(time.Microsecond))
	fmt.Fprintf(w, "\nsaved and loaded with train.LoadBackbone: same predictions: %v\n", res.sameAfterLoad)
	return res, nil
}

// mse returns the mean over all entries of (a − b)².
func mse(a, b *mat.Dense) float64 {
	var d mat.Dense
	d.Sub(a, b)
	r, c := d.Dims()
	n := mat.Norm(&d, 2)
	return n * n / float64(r*c)
}
