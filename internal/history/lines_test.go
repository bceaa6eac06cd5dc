package history

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/linediff"
)

// testSeed is the random tests' seed: fixed, so that a run is repeatable,
// unless DIGEST_DIFF_SEED names another (a number, or "random").
func testSeed(t testing.TB) uint64 {
	seed := uint64(1)
	switch s := os.Getenv("DIGEST_DIFF_SEED"); s {
	case "":
	case "random":
		seed = uint64(time.Now().UnixNano())
	default:
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("DIGEST_DIFF_SEED: %v", err)
		}
		seed = v
	}
	t.Logf("seed %d (replay with DIGEST_DIFF_SEED=%d)", seed, seed)
	return seed
}

// textPair is an old and a new version of one file.
type textPair struct {
	name     string
	old, new string
}

// gitResult is what git prints for one pair.
type gitResult struct {
	hunks          string // the diff from its first "@@" on
	added, removed int
}

// gitDiffs diffs every pair with one `git diff --no-index` of two
// directories, which is far quicker than one process per pair.
func gitDiffs(t testing.TB, pairs []textPair) map[string]*gitResult {
	dir := t.TempDir()
	for _, side := range []string{"a", "b"} {
		if err := os.Mkdir(filepath.Join(dir, side), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range pairs {
		if err := os.WriteFile(filepath.Join(dir, "a", p.name), []byte(p.old), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "b", p.name), []byte(p.new), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := gittest.GitEnv(t)
	run := func(args ...string) []byte {
		args = append([]string{"-c", "core.autocrlf=false", "diff", "--no-index", "--no-color",
			"--no-renames", "--no-ext-diff", "--no-textconv", "--diff-algorithm=myers", "--indent-heuristic"}, args...)
		cmd := exec.Command("git", append(args, "a", "b")...)
		cmd.Dir = dir
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
			err = nil // differences found
		}
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return out
	}
	res := make(map[string]*gitResult, len(pairs))
	get := func(name string) *gitResult {
		r := res[name]
		if r == nil {
			r = &gitResult{}
			res[name] = r
		}
		return r
	}
	for _, l := range strings.Split(strings.TrimSuffix(string(run("--numstat")), "\n"), "\n") {
		if l == "" {
			continue
		}
		f := strings.SplitN(l, "\t", 3)
		if len(f) != 3 {
			t.Fatalf("numstat line %q", l)
		}
		r := get(f[2][strings.LastIndexByte(f[2], '/')+1:])
		r.added, _ = strconv.Atoi(f[0])
		r.removed, _ = strconv.Atoi(f[1])
	}
	patch := strings.ToValidUTF8(string(run("-U3")), "\uFFFD")
	// A file's header starts a line, where its hunks have ' ', '+' or '-'.
	secs := strings.Split("\n"+patch, "\ndiff --git ")[1:]
	for i, sec := range secs {
		if i < len(secs)-1 {
			sec += "\n"
		}
		header, _, _ := strings.Cut(sec, "\n")
		r := get(header[strings.LastIndexByte(header, '/')+1:])
		if i := strings.Index(sec, "\n@@ "); i >= 0 {
			r.hunks = sec[i+1:]
		}
	}
	return res
}

// ourHunks is writeHunks' text from its first "@@" on.
func ourHunks(p textPair) (string, int, int) {
	var b strings.Builder
	added, removed := writeHunks(&b, FileDiff{Path: p.name, OldPath: p.name, Status: 'M'}, p.old, p.new, nil)
	text := b.String()
	if i := strings.Index(text, "@@ "); i >= 0 {
		text = text[i:]
	} else {
		text = ""
	}
	return text, added, removed
}

// checkAgainstGit compares our diffs of pairs with git's: the counts must be
// git's --numstat, and the hunks git's exactly. It returns how many pairs
// had git's hunks.
func checkAgainstGit(t *testing.T, pairs []textPair) (exact int) {
	t.Helper()
	want := gitDiffs(t, pairs)
	shown := 0
	for _, p := range pairs {
		g := want[p.name]
		if g == nil {
			g = &gitResult{}
		}
		hunks, added, removed := ourHunks(p)
		ca, cr := linediff.Count(p.old, p.new)
		if ca != added || cr != removed {
			t.Errorf("%s: countLines +%d -%d, writeHunks +%d -%d", p.name, ca, cr, added, removed)
		}
		if added != g.added || removed != g.removed {
			t.Errorf("%s: +%d -%d, git --numstat +%d -%d", p.name, added, removed, g.added, g.removed)
		}
		if hunks == g.hunks {
			exact++
			continue
		}
		if shown++; shown <= 3 {
			texts := ""
			if len(p.old)+len(p.new) < 4000 {
				texts = fmt.Sprintf("old %q\nnew %q\n", p.old, p.new)
			}
			t.Errorf("%s: hunks differ from git's\n%s--- ours\n%s--- git\n%s", p.name, texts, hunks, g.hunks)
		}
	}
	if shown > 3 {
		t.Errorf("and %d more pairs with hunks unlike git's", shown-3)
	}
	return exact
}

// Line material for random files: few distinct lines, so that a line diff
// has many equally short scripts to choose from, with the blank lines,
// braces and indentation that git's sliding heuristics look at.
var (
	tinyLines = []string{"a", "b", "c"}
	codeLines = []string{"", "", "{", "}", "x", "y = 1", "return", "end", "// note", "\t}", "\tx", "\t\ty", "    z", "  }"}
	oddLines  = []string{"caf\xc3", "\xff\xfe bad", "\x80", "naïve", "tab\tin", "trailing  ", " ",
		"func long_" + strings.Repeat("x", 70) + "  ", strings.Repeat("w ", 39) + "wide", "label:",
		"_under", "$dollar", "9digit", "ÉtoilE"}
)

// randomLines is n lines of code-like text: nested blocks with their
// headers, bodies, closing braces and blank lines, or lines from pool.
func randomLines(r *rand.Rand, n int, pool []string) []string {
	var lines []string
	if pool != nil {
		for range n {
			lines = append(lines, pool[r.IntN(len(pool))])
		}
		return lines
	}
	depth := 0
	for len(lines) < n {
		ind := strings.Repeat("\t", depth)
		switch k := r.IntN(10); {
		case k < 2 && depth < 4:
			heads := []string{"func f() {", "if x {", "for {", "} else {", "type T struct {"}
			h := heads[r.IntN(len(heads))]
			if h == "} else {" && depth > 0 {
				lines = append(lines, strings.Repeat("\t", depth-1)+h)
				continue
			}
			lines = append(lines, ind+h)
			depth++
		case k < 4 && depth > 0:
			depth--
			lines = append(lines, strings.Repeat("\t", depth)+"}")
		case k < 5:
			lines = append(lines, "")
		case k < 6:
			lines = append(lines, oddLines[r.IntN(len(oddLines))])
		case k < 7:
			lines = append(lines, ind+uniqueLine(r))
		default:
			lines = append(lines, ind+codeLines[r.IntN(len(codeLines))])
		}
	}
	return lines
}

// mutateLines edits lines the way people do: deletions, insertions,
// replacements, copies of nearby blocks (the classic ambiguous case), moves,
// and rewrites of a block into new lines kept apart by blank lines and
// braces (where xdiff discards lines that match too often).
func mutateLines(r *rand.Rand, lines []string, edits int, pool []string) []string {
	out := append([]string(nil), lines...)
	for range edits {
		at := r.IntN(len(out) + 1)
		n := 1 + r.IntN(4)
		switch r.IntN(6) {
		case 0: // delete
			out = slices.Delete(out, at, min(len(out), at+n))
		case 1: // insert new lines
			out = slices.Insert(out, at, randomLines(r, n, pool)...)
		case 2: // replace
			out = slices.Replace(out, at, min(len(out), at+n), randomLines(r, n, pool)...)
		case 3: // duplicate the block before at
			out = slices.Insert(out, at, slices.Clone(out[max(0, at-n):at])...)
		case 4: // move a block
			if at+n <= len(out) {
				blk := slices.Clone(out[at : at+n])
				out = slices.Delete(out, at, at+n)
				to := r.IntN(len(out) + 1)
				out = slices.Insert(out, to, blk...)
			}
		case 5: // rewrite a block
			n = 3 + r.IntN(30)
			var blk []string
			for range n {
				if r.IntN(3) == 0 {
					blk = append(blk, []string{"", "}", "\t}", "{"}[r.IntN(4)])
				} else {
					blk = append(blk, uniqueLine(r))
				}
			}
			out = slices.Replace(out, at, min(len(out), at+n), blk...)
		}
	}
	return out
}

// uniqueLine is a line that almost surely occurs nowhere else.
func uniqueLine(r *rand.Rand) string {
	return strings.Repeat("\t", r.IntN(3)) + "u" + strconv.FormatUint(r.Uint64(), 36)
}

// joinLines ends lines with LF, CRLF or a mix, and may leave the last one
// without a newline.
func joinLines(r *rand.Rand, lines []string, eol int, noFinal bool) string {
	var b strings.Builder
	for i, l := range lines {
		b.WriteString(l)
		if i == len(lines)-1 && noFinal {
			break
		}
		switch {
		case eol == 1, eol == 2 && r.IntN(3) == 0:
			b.WriteString("\r\n")
		default:
			b.WriteString("\n")
		}
	}
	return b.String()
}

// randomPairs makes n seeded old/new pairs, mostly small, a few large
// enough for xdiff's discarding and cost heuristics to matter.
func randomPairs(seed uint64, n int) []textPair {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	pairs := make([]textPair, 0, n)
	for i := range n {
		var pool []string
		switch r.IntN(4) {
		case 0:
			pool = tinyLines
		case 1:
			pool = codeLines
		}
		size, edits := r.IntN(40), 1+r.IntN(6)
		switch {
		case i == 1:
			// Big enough (over 2^16 lines in all) that xdiff's edit cost
			// limit exceeds the cost after which it takes good snakes.
			pool, size, edits = nil, 40000+r.IntN(4000), 1000+r.IntN(1000)
		case i%100 == 0:
			// Few repeated lines, edits far apart but many: long snakes past
			// xdiff's heuristic cost, where it takes them as split points.
			pool, size, edits = nil, 2000+r.IntN(4000), 200+r.IntN(300)
		case i%50 == 0:
			size, edits = 1000+r.IntN(3000), 50+r.IntN(800)
		case i%10 == 0:
			size, edits = 100+r.IntN(400), 1+r.IntN(40)
		}
		old := randomLines(r, size, pool)
		new := mutateLines(r, old, edits, pool)
		eol := 0
		if r.IntN(6) == 0 {
			eol = 1 + r.IntN(2)
		}
		pairs = append(pairs, textPair{
			name: fmt.Sprintf("p%05d", i),
			old:  joinLines(r, old, eol, r.IntN(8) == 0),
			new:  joinLines(r, new, eol, r.IntN(8) == 0),
		})
	}
	return pairs
}

// TestDiffLinesMatchesGit diffs random files with git and with us: the
// counts must equal git's --numstat and the hunks git's, byte for byte.
// (Measured: the diffmatchpatch diff this replaced had git's hunks for 55%
// of these pairs and git's counts for 95%.)
func TestDiffLinesMatchesGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	n := 3000
	if testing.Short() {
		n = 500
	}
	pairs := randomPairs(testSeed(t), n)
	exact := checkAgainstGit(t, pairs)
	t.Logf("hunks equal to git's for %d of %d random pairs", exact, len(pairs))
}

// TestDiffLinesMatchesGitOnHistory compares consecutive versions of real
// files from clones of go-git and git, when named (see historyMirror). (The
// diffmatchpatch diff had git's hunks for 78% of the go-git pairs and 62%
// of the git ones, and git's counts for 99.7% and 93%.)
func TestDiffLinesMatchesGitOnHistory(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	for _, m := range mirrors {
		t.Run(m.name, func(t *testing.T) {
			pairs := historyPairs(t, m)
			exact := checkAgainstGit(t, pairs)
			t.Logf("hunks equal to git's for %d of %d pairs", exact, len(pairs))
		})
	}
}

// historyMirror is a repository, named by an environment variable, and
// files whose history makes test pairs: clones of go-git
// (DIGEST_GOGIT_REPO) and git (DIGEST_GIT_REPO), made outside the project.
type historyMirror struct {
	name  string
	env   string
	dir   string
	files []string

	once  sync.Once
	pairs []textPair
}

var (
	goGitMirror = &historyMirror{name: "go-git", env: "DIGEST_GOGIT_REPO", files: []string{
		"repository.go", "worktree.go", "remote.go", "options.go", "config/config.go",
		"plumbing/format/packfile/parser.go", "plumbing/object/commit.go",
		"storage/filesystem/dotgit/dotgit.go", "README.md", "go.mod",
	}}
	gitMirror = &historyMirror{name: "git", env: "DIGEST_GIT_REPO", files: []string{
		"diff.c", "xdiff/xdiffi.c", "sequencer.c", "t/t4015-diff-whitespace.sh", "po/de.po",
	}}
	mirrors = []*historyMirror{goGitMirror, gitMirror}
)

// historyPairs reads up to 40 consecutive versions of each of m's files:
// the edits a history digest actually sees.
func historyPairs(tb testing.TB, m *historyMirror) []textPair {
	if m.dir = os.Getenv(m.env); m.dir == "" {
		tb.Skipf("%s names no clone of %s", m.env, m.name)
	}
	m.once.Do(func() {
		env := gittest.GitEnv(tb)
		gitOut := func(args ...string) (string, error) {
			cmd := exec.Command("git", append([]string{"-C", m.dir}, args...)...)
			cmd.Env = env
			out, err := cmd.Output()
			return string(out), err
		}
		for _, file := range m.files {
			log, err := gitOut("log", "--format=%H", "-n", "40", "--", file)
			if err != nil {
				continue
			}
			var newer string
			for _, h := range strings.Fields(log) {
				text, err := gitOut("show", h+":"+file)
				if err != nil {
					newer = ""
					continue
				}
				if newer != "" && newer != text {
					m.pairs = append(m.pairs, textPair{
						name: fmt.Sprintf("h%03d", len(m.pairs)), old: text, new: newer,
					})
				}
				newer = text
			}
		}
	})
	if len(m.pairs) == 0 {
		tb.Skipf("no file versions in %s", m.dir)
	}
	return m.pairs
}

// BenchmarkDiffLines diffs consecutive versions of real files, as
// Diff does: hunks with context and function names, and counts alone.
func BenchmarkDiffLines(b *testing.B) {
	pairs := historyPairs(b, goGitMirror)
	var bytes int64
	for _, p := range pairs {
		bytes += int64(len(p.old) + len(p.new))
	}
	b.Run("hunks", func(b *testing.B) {
		b.SetBytes(bytes)
		b.ReportAllocs()
		var sb strings.Builder
		for b.Loop() {
			for _, p := range pairs {
				sb.Reset()
				writeHunks(&sb, FileDiff{Path: "f", OldPath: "f", Status: 'M'}, p.old, p.new, nil)
			}
		}
	})
	b.Run("count", func(b *testing.B) {
		b.SetBytes(bytes)
		b.ReportAllocs()
		for b.Loop() {
			for _, p := range pairs {
				linediff.Count(p.old, p.new)
			}
		}
	})
}

// splitTestLines cuts text after each newline, as a reference for checks.
func splitTestLines(text string) []string {
	var lines []string
	for text != "" {
		i := strings.IndexByte(text, '\n') + 1
		if i == 0 {
			i = len(text)
		}
		lines = append(lines, text[:i])
		text = text[i:]
	}
	return lines
}

// checkScript checks that d's changes are an edit script from oldText to
// newText: unchanged lines pair up, and the old text is the unchanged and
// removed lines, the new text the unchanged and added ones, in order.
func checkScript(t *testing.T, oldText, newText string, d linediff.Diff) {
	t.Helper()
	oldLines, newLines := splitTestLines(oldText), splitTestLines(newText)
	if d.Old().Len() != len(oldLines) || d.New().Len() != len(newLines) {
		t.Fatalf("line counts %d, %d; want %d, %d", d.Old().Len(), d.New().Len(), len(oldLines), len(newLines))
	}
	var gotOld, gotNew strings.Builder
	i1, i2 := 0, 0
	equal := func(n int) {
		for k := range n {
			if oldLines[i1+k] != newLines[i2+k] {
				t.Fatalf("unchanged old line %d %q pairs with new line %d %q", i1+k, oldLines[i1+k], i2+k, newLines[i2+k])
			}
			gotOld.WriteString(oldLines[i1+k])
			gotNew.WriteString(newLines[i2+k])
		}
		i1, i2 = i1+n, i2+n
	}
	for j, c := range d.Changes() {
		if c.N1+c.N2 == 0 || c.I1-i1 != c.I2-i2 || c.I1 < i1 || (j > 0 && c.I1 == i1) {
			t.Fatalf("change %d %+v does not follow old line %d, new line %d", j, c, i1, i2)
		}
		if c.I1+c.N1 > len(oldLines) || c.I2+c.N2 > len(newLines) {
			t.Fatalf("change %d %+v runs past the texts", j, c)
		}
		equal(c.I1 - i1)
		gotOld.WriteString(strings.Join(oldLines[c.I1:c.I1+c.N1], ""))
		gotNew.WriteString(strings.Join(newLines[c.I2:c.I2+c.N2], ""))
		i1, i2 = c.I1+c.N1, c.I2+c.N2
	}
	if len(oldLines)-i1 != len(newLines)-i2 {
		t.Fatalf("%d old and %d new lines left after the last change", len(oldLines)-i1, len(newLines)-i2)
	}
	equal(len(oldLines) - i1)
	if gotOld.String() != oldText || gotNew.String() != newText {
		t.Fatalf("the script does not rebuild the texts:\nold %q\n    %q\nnew %q\n    %q", oldText, gotOld.String(), newText, gotNew.String())
	}
}

// applyHunks applies writeHunks' hunks to oldText, checking every header
// and context line on the way, and returns the new text.
func applyHunks(oldText, hunks string) (string, error) {
	oldLines := splitTestLines(oldText)
	var out []string
	next := 0 // the first old line not yet copied
	lines := strings.SplitAfter(hunks, "\n")
	for i := 0; i < len(lines) && lines[i] != ""; {
		var s1, c1, s2, c2 int
		header := lines[i]
		ranges, _, ok := strings.Cut(strings.TrimPrefix(header, "@@ -"), " @@")
		if !strings.HasPrefix(header, "@@ -") || !ok {
			return "", fmt.Errorf("line %d: not a hunk header: %q", i, header)
		}
		parse := func(r string) (start, count int) {
			s, c, found := strings.Cut(r, ",")
			start, _ = strconv.Atoi(s)
			count = 1
			if found {
				count, _ = strconv.Atoi(c)
			}
			return start, count
		}
		o, n, _ := strings.Cut(ranges, " +")
		s1, c1 = parse(o)
		s2, c2 = parse(n)
		if c1 > 0 {
			s1-- // 1-based, but an empty range names the line before
		}
		if c2 > 0 {
			s2--
		}
		if s1 < next || s1 > len(oldLines) || s2 != len(out)+(s1-next) {
			return "", fmt.Errorf("hunk %q out of place (old line %d copied, new text has %d lines)", header, next, len(out))
		}
		out = append(out, oldLines[next:s1]...)
		next = s1
		i++
		seen1, seen2 := 0, 0
		for ; i < len(lines) && lines[i] != "" && !strings.HasPrefix(lines[i], "@@ "); i++ {
			l := lines[i]
			text := l[1:]
			if i+1 < len(lines) && lines[i+1] == "\\ No newline at end of file\n" {
				text = strings.TrimSuffix(text, "\n")
				i++
			}
			switch l[0] {
			case ' ', '-':
				if next >= len(oldLines) || oldLines[next] != text {
					return "", fmt.Errorf("hunk %q: line %q is not old line %d", header, l, next)
				}
				next++
				seen1++
				if l[0] == ' ' {
					out = append(out, text)
					seen2++
				}
			case '+':
				out = append(out, text)
				seen2++
			default:
				return "", fmt.Errorf("hunk %q: stray line %q", header, l)
			}
		}
		if seen1 != c1 || seen2 != c2 {
			return "", fmt.Errorf("hunk %q has %d old and %d new lines", header, seen1, seen2)
		}
	}
	return strings.Join(append(out, oldLines[next:]...), ""), nil
}

// checkDiff runs every check on one pair of texts.
func checkDiff(t *testing.T, oldText, newText string) {
	t.Helper()
	checkScript(t, oldText, newText, linediff.Lines(oldText, newText))
	var b strings.Builder
	added, removed := writeHunks(&b, FileDiff{Path: "f", OldPath: "f", Status: 'M'}, oldText, newText, nil)
	if ca, cr := linediff.Count(oldText, newText); ca != added || cr != removed {
		t.Fatalf("countLines +%d -%d, writeHunks +%d -%d", ca, cr, added, removed)
	}
	text := b.String()
	if !utf8.ValidString(text) {
		t.Fatalf("hunks are not valid UTF-8: %q", text)
	}
	if oldText == newText {
		if text != "" || added != 0 || removed != 0 {
			t.Fatalf("equal texts give +%d -%d %q", added, removed, text)
		}
		return
	}
	if strings.Count(text, "\n+") != added+1 || strings.Count(text, "\n-") != removed { // +1: "+++ b/f"
		t.Fatalf("+%d -%d do not count the lines of\n%s", added, removed, text)
	}
	if !utf8.ValidString(oldText) || !utf8.ValidString(newText) {
		return // the hunks hold U+FFFD for what the texts hold
	}
	_, hunks, _ := strings.Cut(text, "+++ b/f\n")
	got, err := applyHunks(oldText, hunks)
	if err != nil {
		t.Fatalf("%v\nold %q\nnew %q\n%s", err, oldText, newText, hunks)
	}
	if got != newText {
		t.Fatalf("the hunks turn the old text into %q, not %q\n%s", got, newText, hunks)
	}
}

func FuzzDiffLines(f *testing.F) {
	f.Add("", "")
	f.Add("", "a\n")
	f.Add("a\n", "")
	f.Add("a", "a\n")
	f.Add("a\nb\nc\n", "a\nc\n")
	f.Add("a\nb\na\nb\n", "a\nb\n")
	f.Add("x\r\ny\r\n", "x\r\nz\r\ny")
	f.Add("func f() {\n\tx\n}\n\nfunc g() {\n\ty\n}\n", "func f() {\n\tx\n}\n\nfunc h() {\n}\n\nfunc g() {\n\ty\n}\n")
	f.Add("caf\xc3\n\xff\n", "caf\xc3\n\xfe\n")
	f.Add(strings.Repeat("a\n", 30)+"b\n", strings.Repeat("a\n", 31)+"b\n")
	r := rand.New(rand.NewPCG(1, 2))
	for _, p := range randomPairs(r.Uint64(), 20) {
		if len(p.old)+len(p.new) < 4000 {
			f.Add(p.old, p.new)
		}
	}
	f.Fuzz(func(t *testing.T, oldText, newText string) {
		checkDiff(t, oldText, newText)
	})
}

// TestDiffLinesEdges pins the hunks of the cases any diff must get right.
func TestDiffLinesEdges(t *testing.T) {
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"identical", "a\nb\n", "a\nb\n", ""},
		{"both empty", "", "", ""},
		{"empty old", "", "a\nb\n", "@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"empty new", "a\nb\n", "", "@@ -1,2 +0,0 @@\n-a\n-b\n"},
		{"final newline added", "a\nb", "a\nb\n", "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"},
		{"final newline removed", "a\nb\n", "a\nb", "@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n"},
		{"no newline, one line", "a", "b", "@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n"},
		{"only a newline", "", "\n", "@@ -0,0 +1 @@\n+\n"},
		{"insert at start", "b\nc\n", "a\nb\nc\n", "@@ -1,2 +1,3 @@\n+a\n b\n c\n"},
		// git slides a repeated line's insertion to the end of the run, and
		// a new function in front of a blank line (the indent heuristic).
		{"repeat", "a\na\nb\n", "a\na\na\nb\n", "@@ -1,3 +1,4 @@\n a\n a\n+a\n b\n"},
		{"indent heuristic",
			"func a() {\n\tx\n}\n\nfunc c() {\n\tz\n}\n",
			"func a() {\n\tx\n}\n\nfunc b() {\n\ty\n}\n\nfunc c() {\n\tz\n}\n",
			"@@ -2,6 +2,10 @@ func a() {\n \tx\n }\n \n+func b() {\n+\ty\n+}\n+\n func c() {\n \tz\n }\n"},
		{"crlf", "a\r\nb\r\n", "a\r\nc\r\n", "@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n"},
		{"invalid utf-8", "ok\n\xff\xfe\n", "ok\nfine\n", "@@ -1,2 +1,2 @@\n ok\n-\uFFFD\n+fine\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkDiff(t, tc.old, tc.new)
			got, _, _ := ourHunks(textPair{name: "f", old: tc.old, new: tc.new})
			if got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestDiffLinesHugeFile: one changed line in a big file gives git's hunk
// (linediff.TestHugeFileSplitsAroundTheChange holds the cost to the lines
// around it).
func TestDiffLinesHugeFile(t *testing.T) {
	var b strings.Builder
	for i := range 200000 {
		fmt.Fprintf(&b, "\tline %d\n", i)
		if i%1000 == 0 {
			fmt.Fprintf(&b, "func f%d() {\n", i)
		}
	}
	old := b.String()
	new := strings.Replace(old, "\tline 123456\n", "\tline 123456 changed\n", 1)
	checkDiff(t, old, new)
	want := "@@ -123578,7 +123578,7 @@ func f123000() {\n" +
		" \tline 123453\n \tline 123454\n \tline 123455\n-\tline 123456\n+\tline 123456 changed\n \tline 123457\n \tline 123458\n \tline 123459\n"
	if got, added, removed := ourHunks(textPair{name: "f", old: old, new: new}); got != want || added != 1 || removed != 1 {
		t.Errorf("+%d -%d\n%s\nwant\n%s", added, removed, got, want)
	}
}

// TestFuncName follows git's default funcname rule byte for byte.
func TestFuncName(t *testing.T) {
	long := "func " + strings.Repeat("x", 70) + "  tail beyond eighty"
	for _, tc := range []struct{ line, want string }{
		{"func f() {\n", "func f() {"},
		{"func f() {  \t\r\n", "func f() {"},
		{long + "\n", strings.TrimRight(long[:80], " ")},
		{"bad \xff utf-8\n", "bad "},
		{"non\uFFFFchar\n", "non"},
		{"naïve\n", "naïve"},
	} {
		if got := funcName(tc.line); got != tc.want {
			t.Errorf("funcName(%q) = %q, want %q", tc.line, got, tc.want)
		}
	}
}
