package enforce

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestChordValidation: Settings.Chord is rejected where it cannot act as
// documented, with errors that say why.
func TestChordValidation(t *testing.T) {
	f := newSPFramework(3)
	for _, tc := range []struct {
		name string
		s    Settings
		want string
	}{
		{"negative", Settings{Chord: -1, Grad: FinalProjector}, "non-negative"},
		{"dense path", Settings{Chord: 2, Grad: FinalProjector, Path: PathDense}, "sparse path"},
		{"unrolled", Settings{Chord: 2, Path: PathSparse}, "Implicit and FinalProjector"},
		{"projector", Settings{Chord: 2, Path: PathSparse, Grad: Projector}, "Implicit and FinalProjector"},
		{"trainable weights", Settings{Chord: 2, Path: PathSparse, Grad: Implicit, Weights: TrainableDiagonal}, "trainable-diagonal"},
		{"batch weights", Settings{Chord: 2, Path: PathSparse, Grad: Implicit, Weights: BatchDiagonal}, "batch-diagonal"},
		{"negative CG", Settings{Chord: 2, ChordCG: -1, Path: PathSparse, Grad: FinalProjector}, "ChordCG must be non-negative"},
		{"CG without chord", Settings{ChordCG: 5, Path: PathSparse, Grad: FinalProjector}, "needs Settings.Chord"},
	} {
		_, err := NewAdaNP(f, tc.s)
		assert.ErrorContains(t, err, tc.want, tc.name)
	}
	_, err := NewAdaNP(f, Settings{Chord: 2, Path: PathSparse, Grad: FinalProjector})
	assert.NoError(t, err)
	_, err = NewAdaNP(f, Settings{Chord: 2, ChordCG: 5, Path: PathSparse, Grad: Implicit})
	assert.NoError(t, err)
}

// TestChordSteps: on the framework family from far (σ = 0.1, where full
// steps need several), chord steps reach the tolerance on every sample,
// with fewer factorisations than factoring every step, alone and with
// Damping, in Float32, and as inexact Newton steps (ChordCG); a
// FinalProjector gradient through a chord projection is that of its final
// point (equal to a fresh projector's there).
func TestChordSteps(t *testing.T) {
	f := newSPFramework(8)
	_, ny, _ := f.Dims()
	x, yhat := f.start(6, 0.1, 3)
	for _, tc := range []struct {
		damping float64
		prec    Precision
	}{{0, Auto}, {DefaultDamping, Auto}, {0, Float32}} {
		damping := tc.damping
		base := Settings{Path: PathSparse, Grad: FinalProjector, Damping: damping, Precision: tc.prec}
		count := func(s Settings) (int64, Stats) {
			a, err := NewAdaNP(f, s)
			require.NoError(t, err)
			before := factorizations.Load()
			y, st, err := a.Project(x, yhat)
			require.NoError(t, err)
			require.True(t, st.Converged(), "%v", st)
			for i := range 6 {
				c := make([]float64, len(f.bars))
				f.Eval(x.RawRowView(i), y.RawRowView(i), c, nil)
				for _, v := range c {
					require.LessOrEqual(t, math.Abs(v), 1e-6)
				}
			}
			return factorizations.Load() - before, st
		}
		full, stFull := count(base)
		chord := base
		chord.Chord = 3
		fewer, stChord := count(chord)
		cg := chord
		cg.ChordCG = 20
		fewerCG, stCG := count(cg)
		t.Logf("damping %g: %d factorisations, %.2f steps per sample; chord: %d, %.2f; chord with CG: %d, %.2f", damping, full, stFull.MeanDepth, fewer, stChord.MeanDepth, fewerCG, stCG.MeanDepth)
		assert.Less(t, fewer, full, "damping %g: factorisations", damping)
		assert.Less(t, fewerCG, full, "damping %g: factorisations with ChordCG", damping)
	}

	// FinalProjector's gradient depends only on the final point, with
	// chord steps exact or inexact.
	for _, cg := range []int{0, 20} {
		a, err := NewAdaNP(f, Settings{Path: PathSparse, Grad: FinalProjector, Chord: 3, ChordCG: cg})
		require.NoError(t, err)
		up := randDense(rand.New(rand.NewPCG(9, 9)), 6, ny, 1)
		gy, _, _ := gtVJP(t, a, x, yhat, up)
		y, _, err := a.Project(x, yhat)
		require.NoError(t, err)
		// A projection that starts at the chord projection's final point
		// takes one step there (MinDepth 1), of the size of its residual
		// (≤ Tol), so its FinalProjector gradient is the projector at
		// nearly the same point.
		at, err := NewAdaNP(f, Settings{Path: PathSparse, Grad: FinalProjector})
		require.NoError(t, err)
		want, _, _ := gtVJP(t, at, x, y, up)
		assert.Less(t, relErr(gy, want), 1e-5, "ChordCG %d", cg)
	}
}
