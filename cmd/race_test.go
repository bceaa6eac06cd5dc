//go:build race

package cmd

// raceEnabled: this test binary runs under the race detector. The digest
// binaries the process-level tests build are not instrumented, so tests
// that only measure such processes' pacing need not run twice in CI.
const raceEnabled = true
