package sparse

import (
	"math"

	"github.com/enforce-nn/enforce/internal/sgemm"
)

// numeric is one worker's LDLᵀ factor of C = P·A·Pᵀ and its workspaces.
type numeric struct {
	s    *symbolic
	tol  float64
	cx   []float64 // values of the upper triangle of C, in s.ci order
	lx   []float64 // values of L, in s.li order
	d    []float64 // D
	y    []float64 // row accumulator of the factorisation; zero between rows
	w    []float64 // solve workspace
	next []int32   // entries of each column of L computed so far
	// Supernodal workspaces (Method Supernodal): the values in float64,
	// or with single in float32.
	sv                superValues[float64]
	sv32              superValues[float32]
	single            bool
	stmp              []float64 // the solve's buffer: the most rows of a supernode
	relmap            []int32   // row → position in the current supernode
	rel               []int32   // relative row indices of one update
	head, dnext, dpos []int32   // lists of pending updates
	maxDiag           float64
	ok                bool
	// maxFloor, when larger, replaces the largest diagonal entry in the
	// pivot threshold: a pairElim factor sets it to the largest diagonal
	// entry of the whole matrix, of which this one is a Schur complement.
	maxFloor float64
	// perturb, when not nil, holds per step a threshold t_k: a row's
	// pivot above −t_k is replaced by −t_k (static pivoting); perturbed
	// counts them.
	perturb   []float64
	perturbed int
}

// superValues is a supernodal factor's values and the workspaces of its
// dense kernels, in T.
type superValues[T real] struct {
	x    []T // the supernodes' blocks
	cbuf []T // update block
	gw   gemmWork[T]
	add  add4[T] // the small blocks' inner loop
}

func newSuperValues[T real](sn *supernodal, mul func(m int, pa []T, pb *panels[T], j0, j1 int, c []T, ldc int, tile []T),
	mulS func(m int, pa []T, data []T, k, n, stride, j0, j1 int, c []T, ldc int, tile []T), add add4[T]) superValues[T] {
	return superValues[T]{
		x:    make([]T, sn.xp[sn.ns]),
		cbuf: make([]T, sn.maxC),
		gw:   newGemmWork(sn, mul, mulS),
		add:  add,
	}
}

// bytes returns the memory held by v, with sz bytes per value.
func (v *superValues[T]) bytes(sz int) int {
	return sz * (len(v.x) + len(v.cbuf) + len(v.gw.pa) + len(v.gw.pb.Data) + len(v.gw.tile))
}

// newNumeric returns a numeric factor for s; with single and a
// supernodal analysis its blocks are float32 (single is ignored for a
// simplicial one).
func newNumeric(s *symbolic, tol float64, single bool) numeric {
	n := s.n
	if sn := s.sn; sn != nil {
		f := numeric{
			s:      s,
			tol:    tol,
			cx:     make([]float64, len(s.ci)),
			w:      make([]float64, n),
			relmap: make([]int32, n),
			rel:    make([]int32, n),
			head:   make([]int32, sn.ns),
			dnext:  make([]int32, sn.ns),
			dpos:   make([]int32, sn.ns),
			single: single,
		}
		maxM := 0
		for t := 0; t < sn.ns; t++ {
			maxM = max(maxM, sn.rp[t+1]-sn.rp[t])
		}
		f.stmp = make([]float64, maxM)
		if single {
			f.sv32 = newSuperValues(sn, mul32, sgemm.MulPackedStrided, sgemm.Add4x32)
		} else {
			f.sv = newSuperValues(sn, mul64, sgemm.MulPackedStrided64, sgemm.Add4x64)
		}
		return f
	}
	return numeric{
		s:    s,
		tol:  tol,
		cx:   make([]float64, len(s.ci)),
		lx:   make([]float64, len(s.li)),
		d:    make([]float64, n),
		y:    make([]float64, n),
		w:    make([]float64, n),
		next: make([]int32, n),
	}
}

// factor computes C = L·D·Lᵀ from the assembled values in cx by the
// up-looking method: row k of L solves L[:k,:k]·D[:k]·l = C[:k,k] over the
// precomputed pattern of row k, whose columns are visited in increasing
// order (a topological order of the row subtree).
func (f *numeric) factor() error {
	s := f.s
	n := s.n
	f.ok = false
	maxd := 0.0
	for b := 0; b < n; b++ {
		v := f.cx[s.cp[b+1]-1]
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return ErrNonFinite
		}
		if v > maxd {
			maxd = v
		}
	}
	maxd = max(maxd, f.maxFloor)
	f.maxDiag = maxd
	thr := f.tol * maxd
	if s.sn != nil {
		var err error
		if f.single {
			err = factorSuper(f, &f.sv32, thr)
		} else {
			err = factorSuper(f, &f.sv, thr)
		}
		if err != nil {
			return err
		}
		f.ok = true
		return nil
	}
	cp, ci, cx := s.cp, s.ci, f.cx
	lp, li, lx := s.lp, s.li, f.lx
	rp, rj := s.rp, s.rj
	y, d, next := f.y, f.d, f.next
	clear(next)
	for k := 0; k < n; k++ {
		p0, p1 := cp[k], cp[k+1]-1
		for p := p0; p < p1; p++ {
			y[ci[p]] = cx[p]
		}
		dk := cx[p1]
		for _, j32 := range rj[rp[k]:rp[k+1]] {
			j := int(j32)
			yj := y[j]
			y[j] = 0
			q0 := lp[j]
			q1 := q0 + int(next[j])
			lij := li[q0:q1]
			lxj := lx[q0:q1]
			lxj = lxj[:len(lij)]
			for t, r := range lij {
				y[r] -= lxj[t] * yj
			}
			l := yj / d[j]
			dk -= l * yj
			lx[q1] = l
			next[j]++
		}
		// An augmented system's rows (s.neg) have negative pivots, which
		// static pivoting keeps at most −perturb[k].
		neg := s.neg != nil && s.neg[k]
		if neg && f.perturb != nil && dk > -f.perturb[k] && !math.IsNaN(dk) && !math.IsInf(dk, 0) {
			dk = -f.perturb[k]
			f.perturbed++
		}
		if neg && !(dk < -thr) || !neg && !(dk > thr) {
			clear(y)
			if math.IsNaN(dk) || math.IsInf(dk, 0) {
				return ErrNonFinite
			}
			return &NotPositiveError{Index: s.perm[k], Step: k, Pivot: dk, MaxDiag: maxd}
		}
		d[k] = dk
	}
	f.ok = true
	return nil
}

// solve overwrites x (the caller's numbering) with C⁻¹-permuted solution
// A⁻¹x.
func (f *numeric) solve(x []float64) {
	s := f.s
	n := s.n
	if len(x) != n {
		panic("sparse: Solve: len(x) != N()")
	}
	if !f.ok {
		panic("sparse: Solve without a successful Factor")
	}
	w := f.w
	perm := s.perm
	for k, i := range perm {
		w[k] = x[i]
	}
	if s.sn != nil {
		if f.single {
			solveSuper(f, f.sv32.x, accum4Go[float32], w)
		} else {
			solveSuper(f, f.sv.x, sgemm.Add4x64, w)
		}
		for k, i := range perm {
			x[i] = w[k]
		}
		return
	}
	lp, li, lx := s.lp, s.li, f.lx
	for j := 0; j < n; j++ {
		wj := w[j]
		if wj == 0 {
			continue
		}
		lij := li[lp[j]:lp[j+1]]
		lxj := lx[lp[j]:lp[j+1]]
		lxj = lxj[:len(lij)]
		for t, r := range lij {
			w[r] -= lxj[t] * wj
		}
	}
	for j := 0; j < n; j++ {
		w[j] /= f.d[j]
	}
	for j := n - 1; j >= 0; j-- {
		lij := li[lp[j]:lp[j+1]]
		lxj := lx[lp[j]:lp[j+1]]
		lxj = lxj[:len(lij)]
		sum := w[j]
		for t, r := range lij {
			sum -= lxj[t] * w[r]
		}
		w[j] = sum
	}
	for k, i := range perm {
		x[i] = w[k]
	}
}

// bytes returns the memory held by one numeric factor.
func (f *numeric) bytes() int {
	return 8*(len(f.cx)+len(f.lx)+len(f.d)+len(f.y)+len(f.w)+len(f.stmp)) + f.sv.bytes(8) + f.sv32.bytes(4) +
		4*(len(f.next)+len(f.relmap)+len(f.rel)+len(f.head)+len(f.dnext)+len(f.dpos))
}
