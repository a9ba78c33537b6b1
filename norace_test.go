//go:build !race

package shellgate_test

const raceSlowdown = 1
