//go:build !race

package hd_test

const raceEnabled = false
