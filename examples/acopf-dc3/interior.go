package main

import (
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/problems/acopf"
)

// interiorRefine projects the listed rows of y onto the power flow within
// the limits with enforce.Interior (affine-scaling Newton steps kept
// inside the bounds), at most maxIter steps each.
func interiorRefine(m *acopf.Model, path string, x, y *mat.Dense, rowsIdx []int, maxIter int, tol float64) (missed []int, iters []int, err error) {
	s := enforce.Settings{Tol: tol, MaxDepth: maxIter}
	if err := setPath(&s, path); err != nil {
		return nil, nil, err
	}
	p, err := enforce.NewInterior(m.PowerFlow(), m.Box(), 0, s)
	if err != nil {
		return nil, nil, err
	}
	st, err := p.RefineRows(x, y, rowsIdx)
	if err != nil {
		return nil, nil, err
	}
	return st.Missed, []int{st.Depth, int(st.MeanDepth * 100)}, nil
}
