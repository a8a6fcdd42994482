package acopf

import (
	"fmt"
	"sync"

	"github.com/enforce-nn/enforce"
)

// PowerFlow is the AC power-flow balance of a Case in polar form, as an
// enforce.Constraint c(x, y) = 0.
//
// The input x ∈ ℝ^(2·nl) holds the loads of the nl load buses (the buses
// whose Pd or Qd is not zero in the case, in bus order; LoadBuses lists
// them): x = (Pd_1 … Pd_nl, Qd_1 … Qd_nl) in p.u. The output
// y ∈ ℝ^(2·nb + 2·ng) is
//
//	y = (Vm_1 … Vm_nb, Va_1 … Va_nb, Pg_1 … Pg_ng, Qg_1 … Qg_ng)
//
// (voltage magnitudes in p.u., angles in radians, generator injections in
// p.u.), and c ∈ ℝ^(2·nb + nr), nr the number of reference buses
// (Case.Refs; usually 1), is
//
//	c_i      = P_i(Vm, Va) − Σ_{g at i} Pg_g + Pd_i,   i = 1 … nb,
//	c_{nb+i} = Q_i(Vm, Va) − Σ_{g at i} Qg_g + Qd_i,
//	c_{2nb+k} = Va_{r_k} − Va⁰_{r_k},   k = 1 … nr,
//
// with P_i + jQ_i = V_i·conj(Σ_k Y_ik V_k), V_i = Vm_i·e^{j·Va_i}, Y the bus
// admittance matrix (branches in the π model with tap ratio and phase
// shift, line charging, bus shunts) and Pd_i, Qd_i zero at a bus without
// load, and Va⁰_r the reference bus's angle in the file (zero in
// PGLib-OPF's cases). The reference buses' angles are variables of y,
// fixed by the last equations, so that every bus has the same two
// variables.
//
// Every derivative is exact. The Capabilities declare the sparse pattern
// of ∂c/∂y (row i touches Vm and Va of bus i and its neighbours and the
// Pg or Qg of its generators), JacobianX (c is affine in x with a 0/1
// Jacobian), HessVec, a zero MixedHessVec, and JacobianXTVec in Sparse.
type PowerFlow struct {
	nb, ng, nl int
	refs       []int
	refVa      []float64
	y          *admittance
	// genPtr/genIdx list the generators at each bus (CSR).
	genPtr, genIdx []int
	// load[i] is the load index of bus i, or -1.
	load     []int
	loadBus  []int
	rowPtr   []int
	col      []int
	k        enforce.Capabilities
	valsPool sync.Pool
}

// NewPowerFlow returns the power-flow balance of c. It returns an error
// for a case without buses.
func NewPowerFlow(c *Case) (*PowerFlow, error) {
	nb, ng := len(c.Buses), len(c.Gens)
	if nb == 0 {
		return nil, fmt.Errorf("acopf: NewPowerFlow: case %q has no buses", c.Name)
	}
	if len(c.Refs) == 0 {
		return nil, fmt.Errorf("acopf: NewPowerFlow: case %q has no reference bus", c.Name)
	}
	pf := &PowerFlow{nb: nb, ng: ng, y: newAdmittance(c), load: make([]int, nb)}
	for _, r := range c.Refs {
		if r < 0 || r >= nb {
			return nil, fmt.Errorf("acopf: NewPowerFlow: case %q has reference bus index %d out of [0, %d)", c.Name, r, nb)
		}
		pf.refs = append(pf.refs, r)
		pf.refVa = append(pf.refVa, c.Buses[r].Va)
	}
	for i, b := range c.Buses {
		pf.load[i] = -1
		if b.Pd != 0 || b.Qd != 0 {
			pf.load[i] = len(pf.loadBus)
			pf.loadBus = append(pf.loadBus, i)
		}
	}
	pf.nl = len(pf.loadBus)
	pf.genPtr = make([]int, nb+1)
	for _, g := range c.Gens {
		pf.genPtr[g.Bus+1]++
	}
	for i := range nb {
		pf.genPtr[i+1] += pf.genPtr[i]
	}
	pf.genIdx = make([]int, ng)
	fill := append([]int(nil), pf.genPtr[:nb]...)
	for j, g := range c.Gens {
		pf.genIdx[fill[g.Bus]] = j
		fill[g.Bus]++
	}
	// The pattern: P rows, Q rows, the reference rows.
	nr := len(pf.refs)
	pf.rowPtr = make([]int, 2*nb+nr+1)
	for part := range 2 {
		for i := range nb {
			lo, hi := pf.y.rowPtr[i], pf.y.rowPtr[i+1]
			for p := lo; p < hi; p++ {
				pf.col = append(pf.col, pf.y.col[p])
			}
			for p := lo; p < hi; p++ {
				pf.col = append(pf.col, nb+pf.y.col[p])
			}
			for _, j := range pf.genIdx[pf.genPtr[i]:pf.genPtr[i+1]] {
				pf.col = append(pf.col, 2*nb+part*ng+j)
			}
			pf.rowPtr[part*nb+i+1] = len(pf.col)
		}
	}
	for k, r := range pf.refs {
		pf.col = append(pf.col, nb+r)
		pf.rowPtr[2*nb+k+1] = len(pf.col)
	}
	nnz := len(pf.col)
	pf.valsPool.New = func() any { s := make([]float64, nnz); return &s }
	pf.k = enforce.Capabilities{
		JacobianX:    pf.jacobianX,
		HessVec:      pf.hessVec,
		MixedHessVec: pf.mixedHessVec,
		Sparse: &enforce.SparseJacobian{
			RowPtr:        pf.rowPtr,
			Col:           pf.col,
			Eval:          pf.EvalSparse,
			JacobianXTVec: pf.jacobianXTVec,
		},
	}
	return pf, nil
}

// Dims returns nx = 2·nl, ny = 2·nb + 2·ng and nc = 2·nb + nr.
func (pf *PowerFlow) Dims() (nx, ny, nc int) {
	return 2 * pf.nl, 2*pf.nb + 2*pf.ng, 2*pf.nb + len(pf.refs)
}

// Capabilities returns JacobianX, HessVec, MixedHessVec and Sparse.
func (pf *PowerFlow) Capabilities() enforce.Capabilities { return pf.k }

// LoadBuses returns the indices in Case.Buses of the load buses, in the
// order of x. The slice must not be modified.
func (pf *PowerFlow) LoadBuses() []int { return pf.loadBus }

// Pattern returns the sparsity pattern of ∂c/∂y in compressed sparse
// rows (see enforce.SparseJacobian). The slices must not be modified.
func (pf *PowerFlow) Pattern() (rowPtr, col []int) { return pf.rowPtr, pf.col }

// Eval writes c(x, y) into c and, if jy is not nil, ∂c/∂y (nc×ny,
// row-major) into jy.
func (pf *PowerFlow) Eval(x, y, c, jy []float64) {
	_, ny, nc := pf.Dims()
	pf.checkLens("Eval", x, y, c)
	if jy == nil {
		pf.eval(x, y, c, nil)
		return
	}
	if len(jy) != nc*ny {
		panic(fmt.Sprintf("acopf: PowerFlow.Eval: len(jy) = %d, want %d", len(jy), nc*ny))
	}
	vp := pf.valsPool.Get().(*[]float64)
	vals := *vp
	pf.eval(x, y, c, vals)
	clear(jy)
	for i := range nc {
		row := jy[i*ny : (i+1)*ny]
		for p := pf.rowPtr[i]; p < pf.rowPtr[i+1]; p++ {
			row[pf.col[p]] = vals[p]
		}
	}
	pf.valsPool.Put(vp)
}

// EvalSparse writes c(x, y) into c and, when vals is not nil, the values
// of ∂c/∂y in the order of Pattern into vals (length nnz). It is the
// Eval of the SparseJacobian the Capabilities declare.
func (pf *PowerFlow) EvalSparse(x, y, c, vals []float64) {
	pf.checkLens("EvalSparse", x, y, c)
	if vals != nil && len(vals) != len(pf.col) {
		panic(fmt.Sprintf("acopf: PowerFlow.EvalSparse: len(vals) = %d, want nnz = %d", len(vals), len(pf.col)))
	}
	pf.eval(x, y, c, vals)
}

// checkLens panics when x, y or c have the wrong lengths.
func (pf *PowerFlow) checkLens(method string, x, y, c []float64) {
	nx, ny, nc := pf.Dims()
	if len(x) != nx || len(y) != ny || len(c) != nc {
		panic(fmt.Sprintf("acopf: PowerFlow.%s: len(x), len(y), len(c) = %d, %d, %d, want %d, %d, %d",
			method, len(x), len(y), len(c), nx, ny, nc))
	}
}

// eval computes c and, if vals is not nil, the Jacobian's values in
// pattern order. With t = Va_i − Va_k and a, b from pairTerms,
//
//	∂P_i/∂Vm_k = Vm_i·a,  ∂P_i/∂Va_k = Vm_i·Vm_k·b,
//	∂Q_i/∂Vm_k = Vm_i·b,  ∂Q_i/∂Va_k = −Vm_i·Vm_k·a   (k ≠ i),
//
// and the diagonal entries collect the terms' derivatives in Vm_i, Va_i.
func (pf *PowerFlow) eval(x, y, c, vals []float64) {
	nb, ng, nl := pf.nb, pf.ng, pf.nl
	vm, va := y[:nb], y[nb:2*nb]
	pg, qg := y[2*nb:2*nb+ng], y[2*nb+ng:]
	yb := pf.y
	for i := range nb {
		vi, ti := vm[i], va[i]
		lo, hi := yb.rowPtr[i], yb.rowPtr[i+1]
		n := hi - lo
		var p, q, dpdvi, dqdvi, dpdti, dqdti float64
		// Positions of row i's P and Q values.
		pv, qv := pf.rowPtr[i], pf.rowPtr[nb+i]
		for e := lo; e < hi; e++ {
			k := yb.col[e]
			g, b := yb.g[e], yb.b[e]
			if k == i {
				p += vi * vi * g
				q -= vi * vi * b
				dpdvi += 2 * vi * g
				dqdvi -= 2 * vi * b
				continue
			}
			vk := vm[k]
			a, bb := pairTerms(g, b, ti-va[k])
			p += vi * vk * a
			q += vi * vk * bb
			dpdvi += vk * a
			dqdvi += vk * bb
			dpdti -= vi * vk * bb
			dqdti += vi * vk * a
			if vals != nil {
				r := e - lo
				vals[pv+r] = vi * a
				vals[pv+n+r] = vi * vk * bb
				vals[qv+r] = vi * bb
				vals[qv+n+r] = -vi * vk * a
			}
		}
		gl, gh := pf.genPtr[i], pf.genPtr[i+1]
		for _, j := range pf.genIdx[gl:gh] {
			p -= pg[j]
			q -= qg[j]
		}
		if l := pf.load[i]; l >= 0 {
			p += x[l]
			q += x[nl+l]
		}
		c[i], c[nb+i] = p, q
		if vals != nil {
			d := yb.diag[i] - lo
			vals[pv+d], vals[pv+n+d] = dpdvi, dpdti
			vals[qv+d], vals[qv+n+d] = dqdvi, dqdti
			for r := range gh - gl {
				vals[pv+2*n+r] = -1
				vals[qv+2*n+r] = -1
			}
		}
	}
	for k, r := range pf.refs {
		c[2*nb+k] = va[r] - pf.refVa[k]
		if vals != nil {
			vals[pf.rowPtr[2*nb+k]] = 1
		}
	}
}

// hessVec writes out = Σ_i w_i ∇²_yy c_i · v. Only the P_i and Q_i are
// nonlinear, in Vm and Va; for a term f = Vm_i·Vm_k·a(t) of P_i,
//
//	f_{Vm_i Vm_k} = a,  f_{Vm_i t} = −Vm_k·b,  f_{Vm_k t} = −Vm_i·b,  f_tt = −Vm_i·Vm_k·a,
//
// for a term Vm_i·Vm_k·b(t) of Q_i the same with (a, b) → (b, −a), and
// ∂t/∂Va_i = 1, ∂t/∂Va_k = −1; the diagonal terms contribute
// 2·(w_P·G_ii − w_Q·B_ii) in Vm_i Vm_i.
func (pf *PowerFlow) hessVec(x, y, w, v, out []float64) {
	nb := pf.nb
	vm, va := y[:nb], y[nb:2*nb]
	dvm, dva := v[:nb], v[nb:2*nb]
	clear(out)
	ovm, ova := out[:nb], out[nb:2*nb]
	yb := pf.y
	for i := range nb {
		wp, wq := w[i], w[nb+i]
		if wp == 0 && wq == 0 {
			continue
		}
		vi, ti, dvi, dti := vm[i], va[i], dvm[i], dva[i]
		for e := yb.rowPtr[i]; e < yb.rowPtr[i+1]; e++ {
			k := yb.col[e]
			g, b := yb.g[e], yb.b[e]
			if k == i {
				ovm[i] += 2 * (wp*g - wq*b) * dvi
				continue
			}
			vk, dvk := vm[k], dvm[k]
			a, bb := pairTerms(g, b, ti-va[k])
			dt := dti - dva[k]
			// (a, −b) for P, (b, a) for Q: f_{ViVk}, f_{Vi t}/Vk.
			hvv := wp*a + wq*bb
			hvt := -wp*bb + wq*a
			htt := -(wp*a + wq*bb) * vi * vk
			ovm[i] += hvv*dvk + vk*hvt*dt
			ovm[k] += hvv*dvi + vi*hvt*dt
			s := vk*hvt*dvi + vi*hvt*dvk + htt*dt
			ova[i] += s
			ova[k] -= s
		}
	}
}

// jacobianX writes ∂c/∂x: 1 at (i, l) and (nb+i, nl+l) for the load l at
// bus i, 0 elsewhere.
func (pf *PowerFlow) jacobianX(x, y, jx []float64) {
	nx, _, _ := pf.Dims()
	clear(jx)
	for l, i := range pf.loadBus {
		jx[i*nx+l] = 1
		jx[(pf.nb+i)*nx+pf.nl+l] = 1
	}
}

// jacobianXTVec writes out = (∂c/∂x)ᵀ·w.
func (pf *PowerFlow) jacobianXTVec(x, y, w, out []float64) {
	for l, i := range pf.loadBus {
		out[l] = w[i]
		out[pf.nl+l] = w[pf.nb+i]
	}
}

// mixedHessVec writes zero: ∂c/∂y does not depend on x.
func (pf *PowerFlow) mixedHessVec(x, y, w, v, out []float64) { clear(out) }
