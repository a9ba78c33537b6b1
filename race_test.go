//go:build race

package shellgate_test

// raceSlowdown is how many times slower the race detector makes shellgate's
// own work: time bounds that detect blow-ups (a parser's, not the machine's)
// grow by it.
const raceSlowdown = 4
