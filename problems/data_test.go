package problems

import (
	"crypto/sha256"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/enforce-nn/enforce"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

func TestDataDirEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(DataEnv, dir)
	got, err := DataDir()
	require.NoError(t, err)
	assert.Equal(t, dir, got)

	t.Setenv(DataEnv, filepath.Join(dir, "missing"))
	_, err = DataDir()
	assert.ErrorIs(t, err, ErrNoData)

	t.Setenv(DataEnv, "")
	got, err = DataDir()
	require.NoError(t, err)
	assert.Equal(t, "", got, "unset: the embedded copy")
}

// TestEmbeddedDataProvenance checks that every embedded data file is
// listed in data/kkt_hardnet/README.md with its SHA-256, so the
// provenance table describes exactly the bytes that ship.
func TestEmbeddedDataProvenance(t *testing.T) {
	readme, err := embedded.ReadFile(kktHardNetDir + "/README.md")
	require.NoError(t, err)
	_, err = embedded.ReadFile(kktHardNetDir + "/LICENSE")
	require.NoError(t, err, "the licence notice ships with the data")
	entries, err := embedded.ReadDir(kktHardNetDir)
	require.NoError(t, err)
	ncsv := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".csv") {
			continue
		}
		ncsv++
		b, err := embedded.ReadFile(kktHardNetDir + "/" + e.Name())
		require.NoError(t, err)
		sum := sha256.Sum256(b)
		row := fmt.Sprintf("| %s |", e.Name())
		hash := fmt.Sprintf("`%x`", sum)
		found := false
		for _, line := range strings.Split(string(readme), "\n") {
			if strings.HasPrefix(line, row) && strings.Contains(line, hash) {
				found = true
			}
		}
		assert.True(t, found, "README.md lacks the row %s ... %s", row, hash)
	}
	assert.Equal(t, 4, ncsv)
}

// TestLoadFromFolder checks that a folder given by ENFORCE_DATA (with the
// files directly in it or under kkt_hardnet/) gives the same data as the
// embedded copy, and that a folder without the files is a clear error.
func TestLoadFromFolder(t *testing.T) {
	embAll, embSplit, err := LoadPooling("")
	require.NoError(t, err)
	for _, sub := range []string{"", "kkt_hardnet"} {
		dir := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(dir, sub), 0o755))
		for _, name := range []string{"Pooling_dataset.csv", "Pooling_dataset_split_kkthardnet_repo.csv"} {
			b, err := embedded.ReadFile(kktHardNetDir + "/" + name)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, sub, name), b, 0o644))
		}
		all, split, err := LoadPooling(dir)
		require.NoError(t, err, sub)
		assert.True(t, mat.Equal(embAll.X, all.X) && mat.Equal(embAll.Y, all.Y), sub)
		assert.Equal(t, embSplit, split, sub)
	}
	_, _, err = LoadDistillation(t.TempDir())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ED_Col_Data.csv not found")
}

// checkSplit asserts that s partitions 0..n−1 into sets of the given
// sizes, each in increasing order.
func checkSplit(t *testing.T, s Split, n, nTrain, nVal, nTest int) {
	t.Helper()
	assert.Len(t, s.Train, nTrain)
	assert.Len(t, s.Val, nVal)
	assert.Len(t, s.Test, nTest)
	seen := make([]bool, n)
	for _, set := range [][]int{s.Train, s.Val, s.Test} {
		assert.True(t, sort.IntsAreSorted(set))
		for _, i := range set {
			require.False(t, seen[i], "row %d in two sets", i)
			seen[i] = true
		}
	}
	for i, ok := range seen {
		require.True(t, ok, "row %d in no set", i)
	}
}

func TestLoadDistillation(t *testing.T) {
	dir := dataDirOrSkip(t)
	all, split, err := LoadDistillation(dir)
	require.NoError(t, err)
	require.Equal(t, 4308, all.Len())
	nx, ny := all.X.Dims()
	_, my := all.Y.Dims()
	assert.Equal(t, [2]int{4308, 3}, [2]int{nx, ny})
	assert.Equal(t, 9, my)
	checkSplit(t, split, 4308, 3015, 861, 432)
	assert.InDelta(t, 0.363557425, all.X.At(0, 0), 0)
	assert.InDelta(t, 0.308633072, all.Y.At(0, 8), 0)

	assert.LessOrEqual(t, maxAbsResidual(Distillation{}.Equalities(), all), 2e-7)

	train, val, test := all.Partition(split)
	assert.Equal(t, [3]int{3015, 861, 432}, [3]int{train.Len(), val.Len(), test.Len()})
	assert.Equal(t, all.X.RawRowView(split.Test[5]), test.X.RawRowView(5))
	assert.Equal(t, all.Y.RawRowView(split.Val[7]), val.Y.RawRowView(7))

	// A folder with the files in it, or in its kkt_hardnet subfolder, is
	// read instead of the embedded copy (TestLoadFromFolder).
	if dir != "" {
		all2, _, err := LoadDistillation(filepath.Join(dir, "kkt_hardnet"))
		if err == nil {
			assert.Equal(t, all.Len(), all2.Len())
		}
	}
}

func TestLoadPooling(t *testing.T) {
	all, split, err := LoadPooling(dataDirOrSkip(t))
	require.NoError(t, err)
	require.Equal(t, 2000, all.Len())
	_, nx := all.X.Dims()
	_, ny := all.Y.Dims()
	assert.Equal(t, [2]int{4, 5}, [2]int{nx, ny})
	checkSplit(t, split, 2000, 1600, 0, 400)
	_, val, _ := all.Partition(split)
	assert.Equal(t, 0, val.Len())

	p := Pooling{}
	assert.Less(t, maxAbsResidual(p.Equalities(), all), 1e-9)
	g := make([]float64, 2)
	for i := range all.Len() {
		p.Inequalities().Eval(all.X.RawRowView(i), all.Y.RawRowView(i), g, nil)
		require.LessOrEqual(t, g[0], 0.0, "row %d", i)
		require.LessOrEqual(t, g[1], 0.0, "row %d", i)
	}
}

func TestLoadErrors(t *testing.T) {
	_, _, err := LoadDistillation(t.TempDir())
	assert.Error(t, err)
	_, _, err = LoadPooling(t.TempDir())
	assert.Error(t, err)
}

// TestDistillationFuncMatchesAnalytic compares the hyperdual and analytic
// distillation constraints on random points and on data rows.
func TestDistillationFuncMatchesAnalytic(t *testing.T) {
	fc, err := DistillationFunc()
	require.NoError(t, err)
	ac := Distillation{}.Equalities()
	rnd := newRand(5, 0)
	normals := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = rnd.NormFloat64()
		}
		return v
	}
	type point struct{ x, y []float64 }
	var pts []point
	for range 20 {
		pts = append(pts, point{normals(3), normals(9)})
	}
	if dir, err := DataDir(); err == nil {
		all, _, err := LoadDistillation(dir)
		require.NoError(t, err)
		for i := 0; i < all.Len(); i += 97 {
			pts = append(pts, point{all.X.RawRowView(i), all.Y.RawRowView(i)})
		}
	}
	eval := func(c enforce.Constraint, p point, w, v []float64) [][]float64 {
		cv, jy, jx := make([]float64, 6), make([]float64, 54), make([]float64, 18)
		hv, mv := make([]float64, 9), make([]float64, 3)
		c.Eval(p.x, p.y, cv, jy)
		enforce.CapabilitiesOf(c).JacobianX(p.x, p.y, jx)
		enforce.CapabilitiesOf(c).HessVec(p.x, p.y, w, v, hv)
		enforce.CapabilitiesOf(c).MixedHessVec(p.x, p.y, w, v, mv)
		return [][]float64{cv, jy, jx, hv, mv}
	}
	names := []string{"c", "∂c/∂y", "∂c/∂x", "HessVec", "MixedHessVec"}
	for _, p := range pts {
		w, v := normals(6), normals(9)
		got, want := eval(fc, p, w, v), eval(ac, p, w, v)
		for k := range got {
			for i := range got[k] {
				require.LessOrEqual(t, math.Abs(got[k][i]-want[k][i]), 1e-12, "%s[%d]", names[k], i)
			}
		}
	}
}
