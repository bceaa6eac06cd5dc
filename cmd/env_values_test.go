package cmd

// Values from the environment: DIGEST_* variables stand for flags, and a
// bad one is refused naming the variable.

import (
	"context"
	"strings"
	"testing"
)

// TestBadValueFromTheEnvironmentNamesTheVariable: a value checked after
// parsing is refused as its flag's; when it came from DIGEST_*, the error
// says so, since the command line has no such flag to fix.
func TestBadValueFromTheEnvironmentNamesTheVariable(t *testing.T) {
	h := newHarness(t)
	repo := historyRepo(t, 2)
	h.env["DIGEST_FORMAT"] = "tabel"
	for _, args := range [][]string{{"summarize", repo.Dir}, {"eval", sums(t), "--models", "offline"}} {
		res := h.run(context.Background(), args...)
		oneLineError(t, res, 2, `"tabel"`, "(--format was set by DIGEST_FORMAT)")
	}
	delete(h.env, "DIGEST_FORMAT")
	res := h.run(context.Background(), "summarize", repo.Dir, "--format", "tabel")
	oneLineError(t, res, 2, `"tabel"`)
	if strings.Contains(res.errOut, "DIGEST_FORMAT") {
		t.Errorf("a flag given on the command line is said to come from the environment: %s", res.errOut)
	}
}
