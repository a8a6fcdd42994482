//go:build !race

package losses

const raceEnabled = false
