package problems

import (
	"bufio"
	"encoding/csv"
	"io"
	"math/rand/v2"

	"github.com/enforce-nn/enforce/data"
)

// Dataset is a set of samples, inputs X and targets Y.
//
// Deprecated: use data.Dataset, of which it is an alias.
type Dataset = data.Dataset

// Split is a partition of the row indices of a Dataset.
//
// Deprecated: use data.Split, of which it is an alias.
type Split = data.Split

// RandomSplit partitions 0..n−1 at random: data.RandomSplit, which gives
// the same split for the same seed.
//
// Deprecated: use data.RandomSplit.
func RandomSplit(n int, trainFrac, valFrac float64, seed uint64) Split {
	return data.RandomSplit(n, trainFrac, valFrac, seed)
}

// LoadCSV reads your own data from a CSV file: data.LoadCSV (whose errors
// begin with "data:").
//
// Deprecated: use data.LoadCSV.
func LoadCSV(path string, xCols, yCols []string) (Dataset, error) {
	return data.LoadCSV(path, xCols, yCols)
}

// bom is the UTF-8 encoding of the byte order mark U+FEFF.
const bom = "\ufeff"

// newCSVReader returns a CSV reader of r that skips a UTF-8 byte order
// mark at its start, as data.LoadCSV does, so that the engineering loaders
// (readTable, readSplit) read a copy of the data saved by Excel ("CSV
// UTF-8") or by R with fileEncoding = "UTF-8-BOM", whose first header
// name may be quoted after the mark.
func newCSVReader(r io.Reader) *csv.Reader {
	br := bufio.NewReader(r)
	if b, err := br.Peek(len(bom)); err == nil && string(b) == bom {
		br.Discard(len(bom))
	}
	return csv.NewReader(br)
}

// Random streams (the second PCG seed) used by the generators, so that one
// seed gives independent draws for different purposes.
const (
	streamSplit uint64 = 0x5e11_0000 + iota
	streamFitting
	streamCusp
	streamFittingIneq
	streamFittingIneqNoisy
	streamInstance
	streamX
)

// newRand returns a PCG-backed generator for (seed, stream).
func newRand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}
