package report

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
)

// checkSameShape panics unless pred and truth have the same, non-empty
// shape, and returns it.
func checkSameShape(pred, truth mat.Matrix) (n, m int) {
	n, m = truth.Dims()
	pn, pm := pred.Dims()
	if pn != n || pm != m {
		panic(fmt.Sprintf("report: predictions are %d×%d, targets %d×%d", pn, pm, n, m))
	}
	if n == 0 || m == 0 {
		panic("report: empty data")
	}
	return n, m
}

// MSE returns the mean squared error (1/(n·m))·Σ(pred − truth)² over all
// n samples and m outputs.
func MSE(pred, truth mat.Matrix) float64 {
	n, m := checkSameShape(pred, truth)
	var s float64
	for i := range n {
		for j := range m {
			d := pred.At(i, j) - truth.At(i, j)
			s += d * d
		}
	}
	return s / float64(n*m)
}

// R2 returns the coefficient of determination 1 − Σ(y* − ỹ)²/Σ(y* − ȳ*)²
// of each output, averaged over the m outputs (scikit-learn's
// "uniform_average", which the paper's code uses). An output whose targets
// are all equal has no defined R² and yields NaN.
func R2(pred, truth mat.Matrix) float64 {
	n, m := checkSameShape(pred, truth)
	var sum float64
	for j := range m {
		var mean float64
		for i := range n {
			mean += truth.At(i, j)
		}
		mean /= float64(n)
		var res, tot float64
		for i := range n {
			d := pred.At(i, j) - truth.At(i, j)
			t := truth.At(i, j) - mean
			res += d * d
			tot += t * t
		}
		sum += 1 - res/tot
	}
	return sum / float64(m)
}

// MAPEEps is the floor on |y*| in MAPE: float64's machine epsilon
// 2⁻⁵² ≈ 2.22e-16, as in scikit-learn.
const MAPEEps = 0x1p-52

// MAPE returns the mean absolute percentage error of each of the m
// outputs as scikit-learn's mean_absolute_percentage_error computes it, a
// fraction (not a percentage):
//
//	MAPE_j = (1/n) Σ_i |y*_ij − ỹ_ij| / max(|y*_ij|, MAPEEps).
//
// The paper's "MAPE [%]" column is this fraction, averaged over the
// outputs (see MeanMAPE). A target equal to zero counts with the weight
// 1/MAPEEps ≈ 4.5e15 and targets near zero dominate the mean, so compare
// MAPE only between runs on the same test set (RelL1 does not have this
// weakness).
func MAPE(pred, truth mat.Matrix) []float64 {
	n, m := checkSameShape(pred, truth)
	out := make([]float64, m)
	for j := range m {
		var s float64
		for i := range n {
			t := truth.At(i, j)
			s += math.Abs(t-pred.At(i, j)) / math.Max(math.Abs(t), MAPEEps)
		}
		out[j] = s / float64(n)
	}
	return out
}

// MeanMAPE returns the mean over the outputs of MAPE (scikit-learn's
// "uniform_average"), a fraction.
func MeanMAPE(pred, truth mat.Matrix) float64 {
	var s float64
	per := MAPE(pred, truth)
	for _, v := range per {
		s += v
	}
	return s / float64(len(per))
}

// RelL1 returns the relative L1 error 100 %·Σ|y* − ỹ|/Σ|y*| over all
// samples and outputs: a percentage error that, unlike MAPE, stays
// meaningful when targets cross zero.
func RelL1(pred, truth mat.Matrix) float64 {
	n, m := checkSameShape(pred, truth)
	var num, den float64
	for i := range n {
		for j := range m {
			num += math.Abs(truth.At(i, j) - pred.At(i, j))
			den += math.Abs(truth.At(i, j))
		}
	}
	return 100 * num / den
}

// NRMSE returns the paper's normalised root-mean-square error in percent,
// 100 %·RMSE/σ_y, per output and averaged over the m outputs, where σ_y is
// the population standard deviation of that output's targets.
func NRMSE(pred, truth mat.Matrix) float64 {
	n, m := checkSameShape(pred, truth)
	var sum float64
	for j := range m {
		var mean float64
		for i := range n {
			mean += truth.At(i, j)
		}
		mean /= float64(n)
		var res, tot float64
		for i := range n {
			d := pred.At(i, j) - truth.At(i, j)
			t := truth.At(i, j) - mean
			res += d * d
			tot += t * t
		}
		sum += math.Sqrt(res / tot)
	}
	return 100 * sum / float64(m)
}

// evalRows evaluates c at every row of x and y and calls f with the
// sample index and its residual vector.
func evalRows(c enforce.Constraint, x, y *mat.Dense, f func(i int, r []float64)) error {
	if c == nil || y == nil {
		return errors.New("report: nil constraint or predictions")
	}
	cnx, cny, nc := c.Dims()
	n, ny := y.Dims()
	if ny != cny {
		return fmt.Errorf("report: the constraint has ny=%d outputs, the predictions %d", cny, ny)
	}
	var xr []float64
	if cnx > 0 {
		if x == nil {
			return fmt.Errorf("report: the constraint reads nx=%d inputs, but x is nil", cnx)
		}
		xn, nx := x.Dims()
		if xn != n || nx != cnx {
			return fmt.Errorf("report: x is %d×%d, want %d×%d", xn, nx, n, cnx)
		}
	}
	r := make([]float64, nc)
	for i := range n {
		if cnx > 0 {
			xr = x.RawRowView(i)
		}
		c.Eval(xr, y.RawRowView(i), r, nil)
		for _, v := range r {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("report: the constraint is %v at sample %d", v, i)
			}
		}
		f(i, r)
	}
	return nil
}

// Residual returns the mean and the maximum of |c_k(x_i, y_i)| over all
// samples i (rows of x and y) and constraints k, in the constraint's
// units. The paper's "Mean eq." and "Max eq." columns report these
// numbers (multiplied by 100 where they are given in %). It returns an
// error for mismatched dimensions or a non-finite residual.
func Residual(c enforce.Constraint, x, y *mat.Dense) (mean, max float64, err error) {
	var sum float64
	var count int
	err = evalRows(c, x, y, func(_ int, r []float64) {
		for _, v := range r {
			a := math.Abs(v)
			sum += a
			max = math.Max(max, a)
			count++
		}
	})
	if err != nil {
		return 0, 0, err
	}
	if count == 0 {
		return 0, 0, errors.New("report: no samples")
	}
	return sum / float64(count), max, nil
}

// Infeasible returns, for each inequality g_j(x, y) ≤ 0 of g, the
// percentage of samples with g_j(x_i, y_i) > tol (the paper's
// "Infeas. g_j [%]" uses tol = 0). It returns an error for mismatched
// dimensions or a non-finite g.
func Infeasible(g enforce.Constraint, x, y *mat.Dense, tol float64) ([]float64, error) {
	if g == nil || y == nil {
		return nil, errors.New("report: nil constraint or predictions")
	}
	_, _, nc := g.Dims()
	counts := make([]float64, nc)
	n, _ := y.Dims()
	if n == 0 {
		return nil, errors.New("report: no samples")
	}
	err := evalRows(g, x, y, func(_ int, r []float64) {
		for j, v := range r {
			if v > tol {
				counts[j]++
			}
		}
	})
	if err != nil {
		return nil, err
	}
	for j := range counts {
		counts[j] *= 100 / float64(n)
	}
	return counts, nil
}
