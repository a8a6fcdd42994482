package sgemm

import "math"

// The bias and activation epilogue of a layer's product: h = a(h + b) for
// every row of h, in place (float32) or into a float64 output, for the
// two activations that are worth vectorising, ReLU and the identity. On
// amd64 with AVX2 the rows are processed by Go assembly, eight values at a
// time (bias_amd64.s); elsewhere, with the purego build tag, or when
// biasAsm is false, by the Go loops below. Both give the same bits on
// every input: v+b rounded to float32 (when both are NaN, v's in the
// default build; which of two NaNs a Go addition keeps follows the
// compiler's operand order, and the race detector's build keeps b's), and
// ReLU is Go's max(v+b, 0), which on amd64 maps −0 to +0, −Inf and
// negative values to +0, and a NaN to itself with its sign bit cleared.

// BiasReLU sets each whole row r of h (rows of len(b) values; a partial
// last row is left alone) to max(r + b, 0), elementwise.
func BiasReLU(h, b []float32) {
	w := len(b)
	if w == 0 {
		return
	}
	rows := len(h) / w
	if biasAsm && rows > 0 {
		biasReLU32(&h[0], &b[0], rows, w)
		return
	}
	biasReLUGo(h, b)
}

// BiasAdd adds b to each whole row of h (rows of len(b) values; a partial
// last row is left alone).
func BiasAdd(h, b []float32) {
	w := len(b)
	if w == 0 {
		return
	}
	rows := len(h) / w
	if biasAsm && rows > 0 {
		biasAdd32(&h[0], &b[0], rows, w)
		return
	}
	biasAddGo(h, b)
}

// BiasReLU64 writes max(r + b, 0), computed in float32 as BiasReLU does,
// to dst as float64 for each whole row r of h; dst must hold at least as
// many values as those rows.
func BiasReLU64(dst []float64, h, b []float32) {
	w := len(b)
	if w == 0 {
		return
	}
	rows := len(h) / w
	if rows == 0 {
		return
	}
	_ = dst[rows*w-1]
	if biasAsm {
		biasReLU64(&dst[0], &h[0], &b[0], rows, w)
		return
	}
	biasReLU64Go(dst, h, b)
}

// BiasAdd64 writes r + b, computed in float32, to dst as float64 for each
// whole row r of h; dst must hold at least as many values as those rows.
func BiasAdd64(dst []float64, h, b []float32) {
	w := len(b)
	if w == 0 {
		return
	}
	rows := len(h) / w
	if rows == 0 {
		return
	}
	_ = dst[rows*w-1]
	if biasAsm {
		biasAdd64(&dst[0], &h[0], &b[0], rows, w)
		return
	}
	biasAdd64Go(dst, h, b)
}

// biasReLUGo is BiasReLU in Go: max without a branch that random signs
// would mispredict.
func biasReLUGo(h, b []float32) {
	w := len(b)
	for ; len(h) >= w; h = h[w:] {
		row := h[:w:w]
		for j, v := range row {
			row[j] = max(v+b[j], 0)
		}
	}
}

func biasAddGo(h, b []float32) {
	w := len(b)
	for ; len(h) >= w; h = h[w:] {
		row := h[:w:w]
		for j, v := range row {
			row[j] = v + b[j]
		}
	}
}

func biasReLU64Go(dst []float64, h, b []float32) {
	w := len(b)
	for ; len(h) >= w; h, dst = h[w:], dst[w:] {
		row, out := h[:w:w], dst[:w:w]
		for j, v := range row {
			out[j] = float64(max(v+b[j], 0))
		}
	}
}

func biasAdd64Go(dst []float64, h, b []float32) {
	w := len(b)
	for ; len(h) >= w; h, dst = h[w:], dst[w:] {
		row, out := h[:w:w], dst[:w:w]
		for j, v := range row {
			out[j] = float64(v + b[j])
		}
	}
}

// ReLUGrad sets dz[i] = g[i] where y[i] > 0 and +0 elsewhere, for the
// backward pass of y = max(z, 0): the bits of g[i] kept or cleared by a
// mask from the bits of y[i] (kept when they are 1…2³¹ as an unsigned
// integer: y > 0, a NaN with the sign bit clear, or −0, which a ReLU never
// outputs). dz, y and g have one length; dz may alias g.
func ReLUGrad(dz, y, g []float32) {
	n := len(dz)
	if len(y) != n || len(g) != n {
		panic("sgemm: ReLUGrad of slices of different lengths")
	}
	v := 0
	if biasAsm && n >= 8 {
		v = n &^ 7
		reluGrad32(&dz[0], &y[0], &g[0], v)
	}
	reluGradGo(dz[v:], y[v:], g[v:])
}

func reluGradGo(dz, y, g []float32) {
	g, dz = g[:len(y)], dz[:len(y)]
	for i, v := range y {
		// y > 0 iff its bits, as an integer, are positive, iff their
		// negation has the sign bit; the mask keeps g or clears it
		// without a branch.
		m := uint32(int32(-math.Float32bits(v)) >> 31)
		dz[i] = math.Float32frombits(math.Float32bits(g[i]) & m)
	}
}

// ColSum adds the column sums of the whole rows of h (rows of len(sum)
// values; a partial last row is ignored) to sum, row after row, so that
// each column's sum is rounded in the order of the rows whatever the
// vector width.
func ColSum(sum, h []float32) {
	w := len(sum)
	if w == 0 {
		return
	}
	rows := len(h) / w
	if biasAsm && rows > 0 {
		colSum32(&sum[0], &h[0], rows, w)
		return
	}
	colSumGo(sum, h)
}

func colSumGo(sum, h []float32) {
	w := len(sum)
	for ; len(h) >= w; h = h[w:] {
		row := h[:w:w]
		for j, v := range row {
			sum[j] += v
		}
	}
}
