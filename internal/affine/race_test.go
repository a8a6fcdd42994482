//go:build race

package affine

// raceEnabled is set when the race detector is on: sync.Pool then drops
// items at random, so allocation counts are meaningless.
const raceEnabled = true
