package train

import (
	"fmt"
	"hash"
	"hash/fnv"

	"github.com/chewxy/hm"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// tapOp copies the value of a float64 or float32 matrix node into a
// float64 matrix of its own when the machine executes it, and returns a scalar zero that nothing
// reads. A TapeMachine keeps intermediate values in registers that later
// instructions reuse and may overwrite in place, so after a run the value
// of an intermediate node such as ŷ is not reliable; a tap reads it while
// it is live. It is not differentiable and takes no part in the loss.
type tapOp struct {
	dst *mat.Dense
}

// tap adds a tap on n (a (rows, cols) float64 or float32 matrix) to n's graph and
// returns the matrix the tap fills.
func tap(n *gorgonia.Node) (*mat.Dense, error) {
	s := n.Shape()
	op := &tapOp{dst: mat.NewDense(s[0], s[1], nil)}
	if _, err := gorgonia.ApplyOp(op, n); err != nil {
		return nil, err
	}
	return op.dst, nil
}

func (op *tapOp) Arity() int { return 1 }

func (op *tapOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(gorgonia.TensorType{Dims: 2, Of: a}, a)
}

func (op *tapOp) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return tensor.ScalarShape(), nil
}

func (op *tapOp) Do(inputs ...gorgonia.Value) (gorgonia.Value, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("train: tap takes 1 input, got %d", len(inputs))
	}
	r, c := op.dst.Dims()
	dst := op.dst.RawMatrix().Data
	switch d := inputs[0].Data().(type) {
	case []float64:
		if len(d) >= r*c {
			copy(dst, d[:r*c])
			return gorgonia.NewF64(0), nil
		}
	case []float32:
		if len(d) >= r*c {
			for i, v := range d[:r*c] {
				dst[i] = float64(v)
			}
			return gorgonia.NewF32(0), nil
		}
	}
	return nil, fmt.Errorf("train: tap: want %d float64 or float32 values, got %T", r*c, inputs[0].Data())
}

func (op *tapOp) ReturnsPtr() bool     { return false }
func (op *tapOp) CallsExtern() bool    { return false }
func (op *tapOp) OverwritesInput() int { return -1 }

func (op *tapOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "train.tap(%p)", op) }

func (op *tapOp) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

func (op *tapOp) String() string { return "tap" }
