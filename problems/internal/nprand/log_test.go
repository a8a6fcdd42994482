package nprand

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLog checks the double-double logarithm: correctly rounded at
// powers of two (e·ln 2 from a 256-bit ln 2) and exact at 1, and within one ulp of math.Log (itself within one ulp of the
// exact value) on 10⁵ random arguments in (0, 1), the polar method's
// range, with the two differing on some of them (math.Log is not
// correctly rounded).
func TestLog(t *testing.T) {
	assert.Equal(t, 0.0, log(1))
	ln2, _, err := big.ParseFloat("0.693147180559945309417232121458176568075500134360255254120680009", 10, 256, big.ToNearestEven)
	require.NoError(t, err)
	for e := -60; e <= 60; e++ {
		want, _ := new(big.Float).SetPrec(256).Mul(ln2, big.NewFloat(float64(e))).Float64()
		assert.Equal(t, want, log(math.Ldexp(1, e)), "2^%d", e)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	differ := 0
	for range 100000 {
		x := rnd.Float64()
		if x == 0 {
			continue
		}
		got, want := log(x), math.Log(x)
		if got != want {
			differ++
			assert.InDelta(t, want, got, math.Abs(math.Nextafter(want, 0)-want)*1.01, "log(%v)", x)
		}
	}
	t.Logf("%d of 100000 differ from math.Log by one ulp", differ)
	assert.Positive(t, differ)
}

// BenchmarkStandardNormal times one normal draw (half a polar-method
// pair, with the double-double logarithm).
func BenchmarkStandardNormal(b *testing.B) {
	r, err := New(17)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	s := 0.0
	for b.Loop() {
		s += r.StandardNormal()
	}
	_ = s
}
