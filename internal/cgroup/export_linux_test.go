package cgroup

// SweepStale lets the tests sweep a parent of their own.
var SweepStale = sweepStale
