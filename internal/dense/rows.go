package dense

import "gonum.org/v1/gonum/blas/blas64"

// Row returns row i of m, or nil for a matrix without columns.
func Row(m blas64.General, i int) []float64 {
	if m.Cols == 0 {
		return nil
	}
	return m.Data[i*m.Stride : i*m.Stride+m.Cols]
}

// Round32 writes src rounded to float32 into dst (of src's length) and
// reports whether every rounded value is finite: false when src has a NaN
// or infinite entry or one beyond float32's range.
func Round32(dst []float32, src []float64) bool {
	dst = dst[:len(src)]
	var chk float64
	for i, v := range src {
		dst[i] = float32(v)
		chk += float64(dst[i])
	}
	return chk-chk == 0
}
