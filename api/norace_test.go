//go:build !race

package api

// raceOn tells whether the tests run under the race detector, whose
// sync.Pool drops some of what it is given.
const raceOn = false
