package problems

import (
	"github.com/enforce-nn/enforce"
	"gonum.org/v1/gonum/num/hyperdual"
)

// Mole fractions of in the R-410A feed (50/50 wt%) used by
// the distillation component balances h₂ and h₃.
const (
	FeedR32  = 0.697616946
	FeedR125 = 0.302383054
)

// Distillation is the extractive distillation case study of KKT-HardNet
// (Iftakher et al. 2025; paper §5.4.1): separation of R-410A with the
// ionic liquid [EMIM][SCN], simulated in Aspen Plus. The inputs are
//
//	x = (F_feed [mol/s], F_IL [mol/s], RR [–])
//
// and the outputs
//
//	y = (D, B [mol/s], x_D_R32, x_D_R125, x_D_IL, x_B_R32, x_B_R125, x_B_IL [–], L [mol/s]).
//
// The six bilinear equalities, with a = FeedR32 and b = FeedR125, are
//
//	h₁ = x₁ + x₂ − y₁ − y₂            (total mole balance)
//	h₂ = a·x₁ − y₁y₃ − y₂y₆           (R-32 balance)
//	h₃ = b·x₁ − y₁y₄ − y₂y₇           (R-125 balance)
//	h₄ = y₃ + y₄ + y₅ − 1             (distillate fractions)
//	h₅ = y₆ + y₇ + y₈ − 1             (bottoms fractions)
//	h₆ = x₃·y₁ − y₉                   (L = RR·D)
//
// The data (LoadDistillation) satisfy |h| ≤ 1e-7. The reference trains for
// 1200 epochs, batch 64, Adam 1e-4, with the per-sample diagonal weighting
// (enforce.AutoDiagonal), on standardised x and y, projecting in original
// units. One output, x_D_IL (y₅), is about 1e-20 with a standard deviation
// of 2e-21: with package train, standardise and keep the default Identity
// weights, so that training projects in the metric of standardised units
// (train.Config.Standardize); projected with W = I or AutoDiagonal in
// original units, y₅ takes corrections 1e16 times its spread, the
// activation rule rejects every batch and a forced projection diverges.
// With y₅ only mean-centred (the reference's σ floor) the rule still
// rejects nearly every batch in original units, through D and x_B_R125
// (σ ≈ 2.5e-3 and 2.4e-3), which one step moves by many σ
// (examples/distillation).
type Distillation struct{}

// Name returns "distillation".
func (Distillation) Name() string { return "distillation" }

// Dims returns nx = 3, ny = 9.
func (Distillation) Dims() (nx, ny int) { return 3, 9 }

// Equalities returns h₁..h₆ (nc = 6) written analytically. It implements
// JacobianX, HessVec and MixedHessVec in its Capabilities; the only nonzero mixed second
// derivative is ∂²h₆/∂x₃∂y₁ = 1.
func (Distillation) Equalities() enforce.Constraint { return distillationEq{} }

// Inequalities returns nil: there are none.
func (Distillation) Inequalities() enforce.Constraint { return nil }

// Constraint returns Equalities.
func (p Distillation) Constraint() (enforce.Constraint, error) { return p.Equalities(), nil }

// DistillationFunc returns the same equalities h₁..h₆ as
// Distillation.Equalities, built with enforce.Func (forward-mode hyperdual
// differentiation), for benchmarks comparing it with the analytic form.
func DistillationFunc() (enforce.Constraint, error) {
	return enforce.Func(3, 9, 6, func(x, y, c []hyperdual.Number) {
		add, sub, mul := hyperdual.Add, hyperdual.Sub, hyperdual.Mul
		one := hyperdual.Number{Real: 1}
		c[0] = sub(sub(add(x[0], x[1]), y[0]), y[1])
		c[1] = sub(sub(hyperdual.Scale(FeedR32, x[0]), mul(y[0], y[2])), mul(y[1], y[5]))
		c[2] = sub(sub(hyperdual.Scale(FeedR125, x[0]), mul(y[0], y[3])), mul(y[1], y[6]))
		c[3] = sub(add(add(y[2], y[3]), y[4]), one)
		c[4] = sub(add(add(y[5], y[6]), y[7]), one)
		c[5] = sub(mul(x[2], y[0]), y[8])
	})
}

// LoadDistillation reads the distillation data ED_Col_Data.csv (4308
// rows; the 14 empty trailing columns are checked and dropped) and the
// split recovered from the KKT-HardNet repository,
// ED_Col_Data_split_kkthardnet_repo.csv (3015 train / 861 val / 432 test,
// each listed in increasing row order). With dataDir "" it reads the copy
// embedded in this package; otherwise dataDir is a folder holding the two
// files, directly or in a kkt_hardnet subfolder (see DataDir). Use
// all.Partition(split) to obtain the three Datasets.
func LoadDistillation(dataDir string) (all Dataset, split Split, err error) {
	return loadKKTHardNet(dataDir, "ED_Col_Data.csv", "ED_Col_Data_split_kkthardnet_repo.csv",
		[]string{"x1", "x2", "x3", "y1", "y2", "y3", "y4", "y5", "y6", "y7", "y8", "y9"}, 3)
}

// distillationEq is h₁..h₆ of Distillation.
type distillationEq struct{}

func (distillationEq) Dims() (nx, ny, nc int) { return 3, 9, 6 }

func (distillationEq) Eval(x, y, c, jy []float64) {
	checkEval("distillationEq", x, y, c, jy, 3, 9, 6)
	c[0] = x[0] + x[1] - y[0] - y[1]
	c[1] = FeedR32*x[0] - y[0]*y[2] - y[1]*y[5]
	c[2] = FeedR125*x[0] - y[0]*y[3] - y[1]*y[6]
	c[3] = y[2] + y[3] + y[4] - 1
	c[4] = y[5] + y[6] + y[7] - 1
	c[5] = x[2]*y[0] - y[8]
	if jy == nil {
		return
	}
	clear(jy)
	const n = 9
	jy[0*n+0], jy[0*n+1] = -1, -1
	jy[1*n+0], jy[1*n+1], jy[1*n+2], jy[1*n+5] = -y[2], -y[5], -y[0], -y[1]
	jy[2*n+0], jy[2*n+1], jy[2*n+3], jy[2*n+6] = -y[3], -y[6], -y[0], -y[1]
	jy[3*n+2], jy[3*n+3], jy[3*n+4] = 1, 1, 1
	jy[4*n+5], jy[4*n+6], jy[4*n+7] = 1, 1, 1
	jy[5*n+0], jy[5*n+8] = x[2], -1
}

func (distillationEq) JacobianX(x, y, jx []float64) {
	checkJacobianX("distillationEq", x, y, jx, 3, 9, 6)
	clear(jx)
	const n = 3
	jx[0*n+0], jx[0*n+1] = 1, 1
	jx[1*n+0] = FeedR32
	jx[2*n+0] = FeedR125
	jx[5*n+2] = y[0]
}

// HessVec uses ∂²h₂/∂y₁∂y₃ = ∂²h₂/∂y₂∂y₆ = −1 and
// ∂²h₃/∂y₁∂y₄ = ∂²h₃/∂y₂∂y₇ = −1, the only nonzero second derivatives in y.
func (distillationEq) HessVec(x, y, w, v, out []float64) {
	checkHess("distillationEq.HessVec", x, y, w, v, out, 3, 9, 6, 9)
	clear(out)
	out[0] = -w[1]*v[2] - w[2]*v[3]
	out[1] = -w[1]*v[5] - w[2]*v[6]
	out[2] = -w[1] * v[0]
	out[5] = -w[1] * v[1]
	out[3] = -w[2] * v[0]
	out[6] = -w[2] * v[1]
}

func (distillationEq) MixedHessVec(x, y, w, v, out []float64) {
	checkHess("distillationEq.MixedHessVec", x, y, w, v, out, 3, 9, 6, 3)
	out[0], out[1] = 0, 0
	out[2] = w[5] * v[0]
}

// Capabilities declares JacobianX, HessVec and MixedHessVec.
func (c distillationEq) Capabilities() enforce.Capabilities {
	return enforce.Capabilities{JacobianX: c.JacobianX, HessVec: c.HessVec, MixedHessVec: c.MixedHessVec}
}
