package sparse

import "math"

// flip encodes a node index as a negative "absorbed into" pointer; flip is
// its own inverse and maps -1 (none) to -1.
func flip(i int) int { return -i - 2 }

// Node states in amdState.elen (≥ 0 is a live variable with that many
// elements at the front of its list).
const (
	amdAbsorbed = -1 // non-principal variable, or one eliminated with a pivot
	amdElement  = -2 // a pivot: an element of the quotient graph
	amdDense    = -3 // a dense row, ordered last
)

// amdOrder returns an approximate minimum degree ordering of the symmetric
// pattern adj: perm[k] is the node eliminated at step k.
//
// It follows Amestoy, Davis & Duff, "An approximate minimum degree ordering
// algorithm" (SIAM J. Matrix Anal. Appl. 17, 1996) and Davis, "Direct
// Methods for Sparse Linear Systems" §7.1: the quotient graph holds
// variables and elements (eliminated cliques) in one workspace, compacted
// when full; an eliminated pivot absorbs the elements adjacent to it;
// the degree of each variable of the new element is the approximate
// external degree d̄_i = min(n−k, d̄_i + |L_p \ i|, |A_i \ i| + |L_p \ i| +
// Σ_e |L_e \ L_p|); indistinguishable variables are merged into
// supervariables (found by hashing their lists) and variables left with the
// new element only are eliminated with it (mass elimination); an element
// with L_e ⊆ L_p is absorbed (aggressive absorption). Rows with more than
// max(16, dense·√n) entries are ordered last (dense < 0: none).
func amdOrder(adj *adjacency, dense float64) []int {
	n := adj.n
	perm := make([]int, n)
	if n == 0 {
		return perm
	}
	nnz := adj.ptr[n]
	size := nnz + nnz/5 + 2*n + 1
	iw := make([]int32, size)
	copy(iw, adj.idx)
	cnz := nnz

	pe := make([]int, n)
	ln := make([]int, n)
	elen := make([]int, n)
	nv := make([]int, n)
	deg := make([]int, n)
	w := make([]int, n)
	head := make([]int, n+1)
	next := make([]int, n)
	last := make([]int, n)
	hhead := make([]int, n)
	hnext := make([]int, n)
	hkey := make([]int, n)
	step := make([]int, n)

	thr := n
	if dense >= 0 {
		thr = int(math.Max(16, dense*math.Sqrt(float64(n))))
		if thr > n-2 {
			thr = n - 2
		}
	}
	for i := range head {
		head[i] = -1
	}
	nel := 0
	steps := 0
	for i := 0; i < n; i++ {
		pe[i] = adj.ptr[i]
		ln[i] = adj.ptr[i+1] - adj.ptr[i]
		nv[i] = 1
		w[i] = 1
		hhead[i] = -1
		d := ln[i]
		deg[i] = d
		switch {
		case d == 0:
			elen[i] = amdElement
			pe[i] = -1
			w[i] = 0
			nel++
			step[i] = steps
			steps++
		case d > thr:
			elen[i] = amdDense
			nv[i] = 0
			pe[i] = -1
			nel++
		default:
			next[i] = head[d]
			if head[d] != -1 {
				last[head[d]] = i
			}
			last[i] = -1
			head[d] = i
		}
	}

	mindeg := 0
	lemax := 0
	wflg := 2
	for nel < n {
		// Pivot of minimum approximate degree.
		for mindeg < n && head[mindeg] == -1 {
			mindeg++
		}
		k := head[mindeg]
		if nx := next[k]; nx != -1 {
			last[nx] = -1
		}
		head[mindeg] = next[k]
		elenk := elen[k]
		nvk := nv[k]
		nel += nvk

		if elenk > 0 && cnz+mindeg >= size {
			cnz = amdCompact(iw, pe, ln, cnz)
		}

		// The new element L_k: the union of the variables of k's elements
		// and of k's own variables, each flagged by a negative nv.
		degme := 0
		nv[k] = -nvk
		p := pe[k]
		pk1 := cnz
		if elenk == 0 {
			pk1 = p
		}
		pk2 := pk1
		for kk := 1; kk <= elenk+1; kk++ {
			var e, pj, lnj int
			if kk > elenk {
				e, pj, lnj = k, p, ln[k]-elenk
			} else {
				e = int(iw[p])
				p++
				pj, lnj = pe[e], ln[e]
			}
			for t := 0; t < lnj; t++ {
				i := int(iw[pj])
				pj++
				nvi := nv[i]
				if nvi <= 0 {
					continue
				}
				degme += nvi
				nv[i] = -nvi
				iw[pk2] = int32(i)
				pk2++
				if nx := next[i]; nx != -1 {
					last[nx] = last[i]
				}
				if lt := last[i]; lt != -1 {
					next[lt] = next[i]
				} else {
					head[deg[i]] = next[i]
				}
			}
			if e != k {
				pe[e] = flip(k)
				w[e] = 0
			}
		}
		if elenk != 0 {
			cnz = pk2
		}
		deg[k] = degme
		pe[k] = pk1
		ln[k] = pk2 - pk1
		elen[k] = amdElement

		// |L_e \ L_k| = w[e] − wflg for every element e next to L_k.
		for pk := pk1; pk < pk2; pk++ {
			i := int(iw[pk])
			eln := elen[i]
			if eln <= 0 {
				continue
			}
			nvi := -nv[i]
			wnvi := wflg - nvi
			for q := pe[i]; q < pe[i]+eln; q++ {
				e := int(iw[q])
				if we := w[e]; we >= wflg {
					w[e] = we - nvi
				} else if we != 0 {
					w[e] = deg[e] + wnvi
				}
			}
		}

		// Approximate degrees; list pruning, aggressive absorption, mass
		// elimination and hashing for supervariable detection.
		for pk := pk1; pk < pk2; pk++ {
			i := int(iw[pk])
			p1 := pe[i]
			p2 := p1 + elen[i] - 1
			pn := p1
			h, d := 0, 0
			for q := p1; q <= p2; q++ {
				e := int(iw[q])
				if w[e] == 0 {
					continue
				}
				if dext := w[e] - wflg; dext > 0 {
					d += dext
					iw[pn] = int32(e)
					pn++
					h += e
				} else {
					pe[e] = flip(k)
					w[e] = 0
				}
			}
			elen[i] = pn - p1 + 1
			p3 := pn
			p4 := p1 + ln[i]
			for q := p2 + 1; q < p4; q++ {
				j := int(iw[q])
				nvj := nv[j]
				if nvj <= 0 {
					continue
				}
				d += nvj
				iw[pn] = int32(j)
				pn++
				h += j
			}
			if elen[i] == 1 && p3 == pn {
				pe[i] = flip(k)
				nvi := -nv[i]
				degme -= nvi
				nvk += nvi
				nel += nvi
				nv[i] = 0
				elen[i] = amdAbsorbed
				continue
			}
			if d < deg[i] {
				deg[i] = d
			}
			iw[pn] = iw[p3]
			iw[p3] = iw[p1]
			iw[p1] = int32(k)
			ln[i] = pn - p1 + 1
			h %= n
			hnext[i] = hhead[h]
			hhead[h] = i
			hkey[i] = h
		}
		deg[k] = degme
		if degme > lemax {
			lemax = degme
		}
		wflg += lemax + 1

		// Supervariables: variables of L_k with identical lists.
		for pk := pk1; pk < pk2; pk++ {
			i := int(iw[pk])
			if nv[i] >= 0 {
				continue
			}
			h := hkey[i]
			i2 := hhead[h]
			if i2 == -1 {
				continue
			}
			hhead[h] = -1
			for ; i2 != -1 && hnext[i2] != -1; i2 = hnext[i2] {
				lni, eln := ln[i2], elen[i2]
				for q := pe[i2] + 1; q < pe[i2]+lni; q++ {
					w[iw[q]] = wflg
				}
				jlast := i2
				for j := hnext[i2]; j != -1; {
					ok := ln[j] == lni && elen[j] == eln
					for q := pe[j] + 1; ok && q < pe[j]+lni; q++ {
						ok = w[iw[q]] == wflg
					}
					if ok {
						pe[j] = flip(i2)
						nv[i2] += nv[j]
						nv[j] = 0
						elen[j] = amdAbsorbed
						j = hnext[j]
						hnext[jlast] = j
					} else {
						jlast = j
						j = hnext[j]
					}
				}
				wflg++
			}
		}

		// Final degrees; back into the degree lists; compact L_k.
		q := pk1
		nleft := n - nel
		for pk := pk1; pk < pk2; pk++ {
			i := int(iw[pk])
			nvi := -nv[i]
			if nvi <= 0 {
				continue
			}
			nv[i] = nvi
			d := deg[i] + degme - nvi
			if d > nleft-nvi {
				d = nleft - nvi
			}
			next[i] = head[d]
			if head[d] != -1 {
				last[head[d]] = i
			}
			last[i] = -1
			head[d] = i
			if d < mindeg {
				mindeg = d
			}
			deg[i] = d
			iw[q] = int32(i)
			q++
		}
		nv[k] = nvk
		ln[k] = q - pk1
		if ln[k] == 0 {
			pe[k] = -1
			w[k] = 0
		}
		if elenk != 0 {
			cnz = q
		}
		step[k] = steps
		steps++
	}

	// Each absorbed variable is ordered with the pivot its chain of
	// absorptions ends at; dense rows last. A counting sort by step.
	key := hkey
	for i := 0; i < n; i++ {
		switch elen[i] {
		case amdElement:
			key[i] = step[i]
		case amdDense:
			key[i] = steps
		default:
			j := i
			for elen[j] != amdElement {
				j = flip(pe[j])
			}
			key[i] = step[j]
		}
	}
	cnt := make([]int, steps+2)
	for _, s := range key {
		cnt[s+1]++
	}
	for s := 0; s <= steps; s++ {
		cnt[s+1] += cnt[s]
	}
	for i := 0; i < n; i++ {
		perm[cnt[key[i]]] = i
		cnt[key[i]]++
	}
	return perm
}

// amdCompact moves the live lists of iw[:cnz] to its front and returns the
// new end. A live node j has pe[j] ≥ 0; the first entry of its list is
// parked in pe[j] and replaced by flip(j) to find the list in the scan.
func amdCompact(iw []int32, pe, ln []int, cnz int) int {
	for j := range pe {
		if p := pe[j]; p >= 0 && ln[j] > 0 {
			pe[j] = int(iw[p])
			iw[p] = int32(flip(j))
		}
	}
	q := 0
	for p := 0; p < cnz; {
		if iw[p] >= 0 {
			p++
			continue
		}
		j := flip(int(iw[p]))
		iw[q] = int32(pe[j])
		pe[j] = q
		q++
		p++
		for t := 1; t < ln[j]; t++ {
			iw[q] = iw[p]
			q++
			p++
		}
	}
	return q
}
