package f32chk

import (
	"fmt"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/internal/benchcases"
)

func TestX(t *testing.T) {
	cases, _ := benchcases.Cases(1)
	for _, tc := range cases[1:3] {
		for _, p := range []enforce.Precision{enforce.Float64, enforce.Float32} {
			for _, s := range []enforce.Settings{{Precision: p}, {Precision: p, MinDepth: 1, MaxDepth: 1, Tol: 1e-300}, {Precision: p, MinDepth: 3, MaxDepth: 3, Tol: 1e-300}} {
				a, _ := enforce.NewAdaNP(tc.C, s)
				dst := mat.DenseCopyOf(tc.YHat)
				a.ProjectTo(dst, tc.X, tc.YHat)
				t0 := time.Now()
				st, err := a.ProjectTo(dst, tc.X, tc.YHat)
				fmt.Printf("%s %v depth %d..%d: %v  maxdepth %d mean %.2f after max %.2e notconv %d err %v\n", tc.Name, p, s.MinDepth, s.MaxDepth, time.Since(t0), st.Depth, st.MeanDepth, st.After.Max, st.NotConverged, err)
			}
		}
	}
}
