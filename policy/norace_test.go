//go:build !race

package policy_test

const raceDetector = false
