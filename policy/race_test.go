//go:build race

package policy_test

// raceDetector: the race detector slows analysis several times over, past the
// time budget for the largest inputs.
const raceDetector = true
