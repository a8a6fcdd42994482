package dataset

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
)

// LoadModel is the law of a sample's loads: every load k of the case (a
// load bus of acopf.PowerFlow) has its active and its reactive power
// scaled by the same factor
//
//	f_k = α·η_k,   α ~ U[CommonLo, CommonHi] (one per sample),
//	               η_k ~ U[1 − Local, 1 + Local] (independent, one per load),
//
// so Pd_k = f_k·Pd_k⁰ and Qd_k = f_k·Qd_k⁰ (power factors kept). This is
// the structure of OPFData's loads (Lovett et al., "OPFData: Large-scale
// datasets for AC optimal power flow with topological perturbations",
// arXiv:2406.07234: a common scaling of every load and an independent
// perturbation of each) and of PGLearn's "glocal" law (AI4OPT/OPFGenerator,
// src/sampler/glocal.jl: ε = α·η with α a scalar and η a vector, independent).
// OPFData's numeric ranges could not be confirmed from public text, so
// DefaultLoadModel's are this package's choice, not OPFData's.
type LoadModel struct {
	// CommonLo and CommonHi bound the common factor α (0 < CommonLo ≤
	// CommonHi).
	CommonLo, CommonHi float64
	// Local is the half width of each load's factor η_k (0 ≤ Local < 1).
	Local float64
}

// DefaultLoadModel is α ~ U[0.9, 1.1] and η_k ~ U[0.9, 1.1]: every load
// within ±21 % of the case's.
var DefaultLoadModel = LoadModel{CommonLo: 0.9, CommonHi: 1.1, Local: 0.1}

// Validate returns an error unless 0 < CommonLo ≤ CommonHi < ∞ and
// 0 ≤ Local < 1.
func (l LoadModel) Validate() error {
	if !(l.CommonLo > 0) || !(l.CommonLo <= l.CommonHi) || math.IsInf(l.CommonHi, 1) {
		return fmt.Errorf("dataset: load model: common factor range [%v, %v], want 0 < lo ≤ hi < ∞", l.CommonLo, l.CommonHi)
	}
	if !(l.Local >= 0 && l.Local < 1) {
		return fmt.Errorf("dataset: load model: local half width %v, want 0 ≤ Local < 1", l.Local)
	}
	return nil
}

// String returns the load model as the data files' header writes it:
// "glocal-uniform alpha=U[lo,hi] eta=U[1-s,1+s]" with lo, hi, s in Go's
// shortest exact form. ParseLoadModel reads it back.
func (l LoadModel) String() string {
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	return "glocal-uniform alpha=U[" + g(l.CommonLo) + "," + g(l.CommonHi) + "] eta=U[1-" + g(l.Local) + ",1+" + g(l.Local) + "]"
}

// ParseLoadModel reads LoadModel.String's form, and only that form: the
// parsed model must print back to s.
func ParseLoadModel(s string) (LoadModel, error) {
	var l LoadModel
	var s2 float64
	if _, err := fmt.Sscanf(s, "glocal-uniform alpha=U[%g,%g] eta=U[1-%g,1+%g]", &l.CommonLo, &l.CommonHi, &l.Local, &s2); err != nil {
		return LoadModel{}, fmt.Errorf("dataset: load model %q: %w", s, err)
	}
	if l.String() != s || s2 != l.Local {
		return LoadModel{}, fmt.Errorf("dataset: load model %q is not in canonical form %q", s, l.String())
	}
	return l, l.Validate()
}

// Draw writes sample i's loads into dst (len(dst) = len(base) = 2·nl,
// Pd then Qd of the nl load buses, as acopf.PowerFlow's x, base the
// case's own loads, acopf.Model.Loads) and returns dst. The draws come
// from rand.NewPCG(seed, i) alone, α first and then η_1, …, η_nl, so a
// sample's loads depend only on (base, seed, i), bit for bit on every
// platform (the products are rounded explicitly, never fused).
func (l LoadModel) Draw(dst, base []float64, seed uint64, i int) ([]float64, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	if len(base)%2 != 0 || len(dst) != len(base) {
		return nil, fmt.Errorf("dataset: LoadModel.Draw: len(base) = %d, len(dst) = %d, want equal and even", len(base), len(dst))
	}
	if i < 0 {
		return nil, errors.New("dataset: LoadModel.Draw: negative sample index")
	}
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	alpha := l.CommonLo + float64((l.CommonHi-l.CommonLo)*r.Float64())
	nl := len(base) / 2
	for k := range nl {
		eta := 1 - l.Local + float64(2*l.Local*r.Float64())
		f := float64(alpha * eta)
		dst[k] = float64(base[k] * f)
		dst[nl+k] = float64(base[nl+k] * f)
	}
	return dst, nil
}
