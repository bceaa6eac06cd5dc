package redact

import (
	"go/scanner"
	"go/token"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHighEntropyRuleCatchesRandomTokensAndSparesIdentifiers measures the
// bare-token rule on what it must tell apart: random tokens of the
// alphabets keys are made of, at the lengths keys have, against the
// identifiers of this module's own source, which the rule never saw while
// its thresholds were chosen.
func TestHighEntropyRuleCatchesRandomTokensAndSparesIdentifiers(t *testing.T) {
	alphabets := []struct {
		name, chars string
		minRecall   float64
	}{
		{"base62", alnumChars, 0.99},
		{"base64", alnumChars + "+/", 0.99},
		{"base64url", alnumChars + "-_", 0.99},
		{"letters, both cases", alphaUpper + alphaLower, 0.98},
		{"lower case and digits", alphaLower + digitChars, 0.90},
		{"upper case and digits", alphaUpper + digitChars, 0.90},
	}
	gen := secretGen{rand.New(rand.NewPCG(24, 24))}
	const perLength = 2000
	for _, a := range alphabets {
		for _, n := range []int{20, 24, 32, 40} {
			caught := 0
			for range perLength {
				if looksRandom(gen.pick(a.chars, n), "") {
					caught++
				}
			}
			recall := float64(caught) / perLength
			t.Logf("%-22s %2d characters: %5.1f%% caught", a.name, n, 100*recall)
			if recall < a.minRecall {
				t.Errorf("%s of %d characters: %.1f%% caught, want %.0f%% at least", a.name, n, 100*recall, 100*a.minRecall)
			}
		}
	}

	idents := moduleIdentifiers(t)
	var flagged []string
	for _, id := range idents {
		if looksRandom(id, "") {
			flagged = append(flagged, id)
		}
	}
	t.Logf("identifiers of %d characters or more in this module: %d, taken for random: %d %v", minTokenLen, len(idents), len(flagged), flagged)
	if len(idents) < 200 {
		t.Fatalf("only %d identifiers found in the module's source; the measure needs more", len(idents))
	}
	if len(flagged) > 0 {
		t.Errorf("identifiers taken for random tokens: %v", flagged)
	}
}

// moduleIdentifiers are the distinct identifiers, of a bare token's length
// at least, in the Go source of the module this package is in.
func moduleIdentifiers(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	var idents []string
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != "../.." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "bigrams.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var s scanner.Scanner
		fset := token.NewFileSet()
		s.Init(fset.AddFile(path, -1, len(src)), src, nil, 0)
		for {
			_, tok, lit := s.Scan()
			if tok == token.EOF {
				break
			}
			if tok == token.IDENT && len(lit) >= minTokenLen && !seen[lit] {
				seen[lit] = true
				idents = append(idents, lit)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return idents
}
