package layers

import (
	"bytes"
	"math"
	"sync"
	"unsafe"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/internal/par"
	"github.com/enforce-nn/enforce/internal/sgemm"
)

// A float32 MLP predicts in float32 on enforce's single-precision matrix
// product (internal/sgemm: AVX-512 or AVX2/FMA Go assembly where the CPU
// has it), the kernel gorgonia's float32 graphs use in the default build.
// Each layer's W is packed once and kept (packCache) until its bits
// change; the rows of x are split among the cores in blocks of
// predictRows, and each block runs through the whole network while its
// activations stay in cache, with the bias and the activation applied to
// each layer's product as soon as it is computed.

// predictRows is the number of rows a worker carries through the network
// at a time: a multiple of 2·sgemm.MR (the height of the largest kernel),
// so that every row is computed by the same kernel with the same
// summation order whatever the number of workers (par.ForBlocks).
const predictRows = 8 * sgemm.MR

// mlp32 is the state of one float32 Predict call, shared by its workers.
type mlp32 struct {
	layers []*Dense
	w      []sgemm.Panels // each layer's W, packed
	b      [][]float32
	x      *mat.Dense
	out    []float64 // rows×out of the last layer
}

// scratch32 is one worker's buffers: the packed rows of a layer's input
// and the layer's output.
type scratch32 struct {
	pa, h, tile []float32
}

var scratch32Pool = sync.Pool{New: func() any { return new(scratch32) }}

func grow32(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// predict32 writes the float32 network's output for x, as float64, into
// dst (of the output's shape; written in place when its rows are
// contiguous, else through a copy).
func (m *MLP) predict32(dst, x *mat.Dense) {
	rows, _ := x.Dims()
	last := m.layers[len(m.layers)-1]
	st := &mlp32{layers: m.layers, w: m.packed.get(m.layers), b: make([][]float32, len(m.layers)), x: x}
	for i, l := range m.layers {
		st.b[i] = l.b.Value().Data().([]float32)
	}
	z := dst
	if raw := dst.RawMatrix(); raw.Stride != raw.Cols {
		z = mat.NewDense(rows, last.out, nil)
	}
	st.out = z.RawMatrix().Data
	par.ForBlocks(rows, predictRows, st)
	if z != dst {
		dst.Copy(z)
	}
}

// packCache keeps a float32 MLP's weight matrices packed for
// sgemm.MulPacked, with copies of the bits they were packed from. Every
// Predict compares the weights' bits with those copies (2.9 µs for a
// 200×200 matrix against 18 µs to pack it, and no allocation; measured
// with the machine shared) and repacks on any difference, so no write to
// the weights can be missed: a training step, a checkpoint load,
// SetWeights, or a user's own write through the nodes.
type packCache struct {
	mu    sync.Mutex
	entry *packEntry
}

// packEntry is one packing, never changed once made: a Predict that holds
// it keeps valid panels even while another repacks.
type packEntry struct {
	w   []sgemm.Panels
	src [][]float32
}

// get returns the packed weights of layers, packing them anew if their
// bits differ from those of the last packing.
func (c *packCache) get(layers []*Dense) []sgemm.Panels {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entry; e != nil && len(e.src) == len(layers) {
		same := true
		for i, l := range layers {
			if !sameBits32(e.src[i], l.w.Value().Data().([]float32)) {
				same = false
				break
			}
		}
		if same {
			return e.w
		}
	}
	e := &packEntry{w: make([]sgemm.Panels, len(layers)), src: make([][]float32, len(layers))}
	for i, l := range layers {
		w := l.w.Value().Data().([]float32)
		e.src[i] = append([]float32(nil), w...)
		e.w[i].Pack(l.in, l.out, e.src[i], l.out)
	}
	c.entry = e
	return e.w
}

// sameBits32 reports whether a and b hold the same bits (a NaN equals
// itself, −0 differs from +0).
func sameBits32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 {
		return true
	}
	return bytes.Equal(unsafe.Slice((*byte)(unsafe.Pointer(&a[0])), 4*len(a)), unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), 4*len(b)))
}

// Run computes the output rows [lo, hi), predictRows at a time.
func (st *mlp32) Run(lo, hi int) {
	s := scratch32Pool.Get().(*scratch32)
	defer scratch32Pool.Put(s)
	widest := 0
	for _, l := range st.layers {
		widest = max(widest, l.in, l.out)
	}
	s.pa = grow32(s.pa, sgemm.WorkLen(predictRows, widest))
	s.h = grow32(s.h, predictRows*widest)
	s.tile = grow32(s.tile, sgemm.MR*sgemm.NR)
	x := st.x.RawMatrix()
	for r0 := lo; r0 < hi; r0 += predictRows {
		n := min(predictRows, hi-r0)
		sgemm.PackAScaled(n, x.Cols, x.Data[r0*x.Stride:], x.Stride, nil, s.pa)
		for i, l := range st.layers {
			h := s.h[:n*l.out]
			sgemm.MulPacked(n, s.pa, &st.w[i], 0, l.out, h, l.out, false, s.tile)
			if i == len(st.layers)-1 {
				biasAct64(st.out[r0*l.out:(r0+n)*l.out], h, st.b[i], l.act)
				break
			}
			biasAct32(h, st.b[i], l.act)
			sgemm.PackAScaled(n, l.out, h, l.out, nil, s.pa)
		}
	}
}

// biasAct32 adds b to every row of h and applies a, in place. ReLU and
// the identity run on sgemm's bias epilogues (AVX2 assembly where the CPU
// has it, bit for bit the Go loop max(v+b, 0) or v+b otherwise: ReLU maps
// −0 to +0 and keeps NaN); the other activations on the loop below.
func biasAct32(h, b []float32, a Activation) {
	switch a {
	case ReLU:
		sgemm.BiasReLU(h, b)
		return
	case Identity:
		sgemm.BiasAdd(h, b)
		return
	}
	w := len(b)
	for ; len(h) >= w; h = h[w:] {
		row := h[:w:w]
		for j, v := range row {
			row[j] = float32(a.value(float64(v + b[j])))
		}
	}
}

// biasAct64 writes a(h + b), row by row, to dst as float64 (ReLU and the
// identity on sgemm's bias epilogues, as biasAct32).
func biasAct64(dst []float64, h, b []float32, a Activation) {
	switch a {
	case ReLU:
		sgemm.BiasReLU64(dst, h, b)
		return
	case Identity:
		sgemm.BiasAdd64(dst, h, b)
		return
	}
	w := len(b)
	for ; len(h) >= w; h, dst = h[w:], dst[w:] {
		row, out := h[:w:w], dst[:w:w]
		for j, v := range row {
			out[j] = float64(float32(a.value(float64(v + b[j]))))
		}
	}
}

// value returns a(v) in float64 arithmetic (ReLU maps only negative
// values to 0).
func (a Activation) value(v float64) float64 {
	switch a {
	case ReLU:
		if v < 0 {
			return 0
		}
	case Tanh:
		return math.Tanh(v)
	case Sigmoid:
		return 1 / (1 + math.Exp(-v))
	}
	return v
}
