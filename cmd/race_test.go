//go:build race

package cmd

// raceEnabled: this test binary runs under the race detector. The digest
// binary the process tests build is not instrumented, so buildDigest skips
// them here: they run once, in the plain run.
const raceEnabled = true
