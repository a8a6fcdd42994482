//go:build !race

package affine

const raceEnabled = false
