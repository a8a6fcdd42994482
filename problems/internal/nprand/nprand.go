// Package nprand reproduces, bit for bit, the draws of NumPy's legacy
// global generator (numpy.random.RandomState, as used through
// np.random.seed and np.random.random / normal / uniform / permutation)
// for integer seeds (normals to within one ulp, see below), so that instances published as "np.random.seed(17),
// then draw …" can be regenerated in Go without Python.
//
// It is written from the algorithms' public descriptions:
//
//   - the generator is MT19937 (Matsumoto & Nishimura 1998), seeded by
//     init_genrand(seed) for an integer seed 0 ≤ seed < 2³², which is what
//     np.random.seed(int) does;
//   - a double in [0, 1) is built from two 32-bit outputs a and b as
//     ((a>>5)·2²⁶ + (b>>6)) / 2⁵³ (53 random bits);
//   - a standard normal comes from the Marsaglia polar method, which
//     produces two normals per accepted pair and caches the second for the
//     next call (the cache survives intervening uniform draws);
//     the logarithm in it is the C library's in NumPy; this package
//     computes it correctly rounded in double-double arithmetic (log.go).
//     glibc's log is within 0.52 ulp, not correctly rounded, so a few
//     normals in 10,000 differ from NumPy's on glibc by one ulp (7 of the
//     30,000 of C at (200, 150); with Go's math.Log it would be 911);
//     everything else, including every uniform and the generator's
//     state, is bit for bit NumPy's;
//   - uniform(low, high) is low + (high − low)·u;
//   - a permutation of 0..n−1 is a Fisher–Yates shuffle from the last
//     position down, each index drawn by masked rejection on 32-bit
//     outputs; choice(n, k, replace=False) is its first k entries.
//
// The tests compare against fixtures produced by NumPy 1.24.2
// (testdata/gen.py).
package nprand

import (
	"fmt"
	"math"
)

const (
	n         = 624
	m         = 397
	matrixA   = 0x9908b0df
	upperMask = 0x80000000
	lowerMask = 0x7fffffff
)

// RandomState is NumPy's legacy generator state: the MT19937 key and
// position, and the cached second normal of the polar method.
type RandomState struct {
	mt      [n]uint32
	pos     int
	gauss   float64
	hasGaus bool
}

// New returns the state after np.random.seed(seed). It returns an error
// unless 0 ≤ seed < 2³², the range np.random.seed accepts.
func New(seed int64) (*RandomState, error) {
	if seed < 0 || seed > math.MaxUint32 {
		return nil, fmt.Errorf("nprand: seed %d out of range [0, 2³²)", seed)
	}
	r := &RandomState{}
	r.mt[0] = uint32(seed)
	for i := 1; i < n; i++ {
		prev := r.mt[i-1]
		r.mt[i] = 1812433253*(prev^(prev>>30)) + uint32(i)
	}
	r.pos = n
	return r, nil
}

// twist regenerates the key.
func (r *RandomState) twist() {
	for i := range n {
		y := r.mt[i]&upperMask | r.mt[(i+1)%n]&lowerMask
		v := r.mt[(i+m)%n] ^ y>>1
		if y&1 != 0 {
			v ^= matrixA
		}
		r.mt[i] = v
	}
	r.pos = 0
}

// Uint32 returns the next tempered 32-bit output of MT19937.
func (r *RandomState) Uint32() uint32 {
	if r.pos >= n {
		r.twist()
	}
	y := r.mt[r.pos]
	r.pos++
	y ^= y >> 11
	y ^= y << 7 & 0x9d2c5680
	y ^= y << 15 & 0xefc60000
	y ^= y >> 18
	return y
}

// Random returns a double in [0, 1) with 53 random bits, as
// np.random.random() (random_sample).
func (r *RandomState) Random() float64 {
	a, b := r.Uint32()>>5, r.Uint32()>>6
	return (float64(a)*67108864 + float64(b)) / 9007199254740992
}

// Uniform returns low + (high − low)·Random(), as np.random.uniform.
func (r *RandomState) Uniform(low, high float64) float64 {
	return low + (high-low)*r.Random()
}

// StandardNormal returns an N(0, 1) draw by the polar method with its
// cached second value, as np.random.standard_normal.
func (r *RandomState) StandardNormal() float64 {
	if r.hasGaus {
		r.hasGaus = false
		return r.gauss
	}
	for {
		x1 := 2*r.Random() - 1
		x2 := 2*r.Random() - 1
		r2 := float64(x1*x1) + float64(x2*x2) // no fused multiply-add
		if r2 >= 1 || r2 == 0 {
			continue
		}
		f := math.Sqrt(-2 * log(r2) / r2)
		r.gauss, r.hasGaus = f*x1, true
		return f * x2
	}
}

// Normal returns loc + scale·StandardNormal(), as np.random.normal.
func (r *RandomState) Normal(loc, scale float64) float64 {
	return loc + scale*r.StandardNormal()
}

// interval returns a uniform integer in [0, max] by masked rejection on
// 32-bit outputs (max < 2³²).
func (r *RandomState) interval(max uint32) uint32 {
	if max == 0 {
		return 0
	}
	mask := max
	for s := 1; s < 32; s *= 2 {
		mask |= mask >> s
	}
	for {
		if v := r.Uint32() & mask; v <= max {
			return v
		}
	}
}

// Permutation returns a random permutation of 0..k−1, as
// np.random.permutation(k). It panics if k < 0 or k ≥ 2³².
func (r *RandomState) Permutation(k int) []int {
	if k < 0 || int64(k) > math.MaxUint32 {
		panic(fmt.Sprintf("nprand: Permutation(%d): want 0 ≤ k < 2³²", k))
	}
	p := make([]int, k)
	for i := range p {
		p[i] = i
	}
	for i := k - 1; i >= 1; i-- {
		j := int(r.interval(uint32(i)))
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// Choice returns k distinct integers from 0..pop−1, as
// np.random.choice(pop, k, replace=False): the first k entries of
// Permutation(pop). It panics unless 0 ≤ k ≤ pop.
func (r *RandomState) Choice(pop, k int) []int {
	if k < 0 || k > pop {
		panic(fmt.Sprintf("nprand: Choice(%d, %d): want 0 ≤ k ≤ pop", pop, k))
	}
	return r.Permutation(pop)[:k]
}
