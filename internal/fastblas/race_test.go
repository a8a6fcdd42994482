//go:build race

package fastblas

const raceEnabled = true
