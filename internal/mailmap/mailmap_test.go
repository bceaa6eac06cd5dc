package mailmap

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/gittest"
)

// checkMailmap asks `git check-mailmap` how the mailmap text maps each
// contact ("Name <email>"), with the text as a repository's .mailmap.
func checkMailmap(t *testing.T, text string, contacts []string) []string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	env := gittest.GitEnv(t)
	run := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args[0], err)
		}
		return string(out)
	}
	run("init", "-q")
	if err := os.WriteFile(filepath.Join(dir, ".mailmap"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out := run(append([]string{"check-mailmap"}, contacts...)...)
	return strings.Split(strings.TrimSuffix(out, "\n"), "\n")
}

// contact is how check-mailmap prints a name and an address.
func contact(name, email string) string {
	if name == "" {
		return "<" + email + ">"
	}
	return name + " <" + email + ">"
}

func ours(m *Map, c string) string {
	name, rest, _ := strings.Cut(c, "<")
	email := strings.TrimSuffix(rest, ">")
	return contact(m.Resolve(strings.TrimSpace(name), email))
}

// TestResolveMatchesGitCheckMailmap: the four forms of line, comments,
// addresses in another case, a name-and-address entry beside an
// address-only one, later lines overriding earlier ones, and lines git
// ignores.
func TestResolveMatchesGitCheckMailmap(t *testing.T) {
	text := strings.Join([]string{
		"# a comment <not@an.entry>",
		"Ada Lovelace <ada@example.com>",
		"<ada@example.com> <ada@old.example>",
		"Ada Lovelace <ada@example.com> <ADA@Laptop.local>",
		"Grace Hopper <grace@example.com> Grace <g@shared.example>",
		"Linus <linus@example.com> linus t <g@shared.example>",
		"Shared Default <shared@example.com> <g@shared.example>",
		"Only Name <only@name.example>",
		"Only Name Later <only@name.example>",
		"<only-email@new.example> <only@name.example>",
		"   Spaced   Name \t <spaced@example.com>   # trailing comment",
		"Bob <bob@example.com> <bob@old.example> trailing words",
		"Nobody <>",
		"<> <empty-proper@example.com>",
		"Empty Old <eo@example.com> <>",
		"no address at all",
		"Broken <unterminated@example.com",
		" # not a comment, no address",
		"Carol <carol@example.com> Carol C <carol@old.example>\r",
		"Dan <dan@example.com> Dan\x00Hidden <dan@old.example>",
		"Eve <EVE@example.com> eve <EVE@OLD.example>",
	}, "\n") + "\n"
	contacts := []string{
		"Ada <ada@example.com>", "A. L. <ada@old.example>", "Ada <ada@laptop.local>", "Someone <ADA@LAPTOP.LOCAL>",
		"Grace <g@shared.example>", "grace <G@SHARED.example>", "Linus T <g@shared.example>", "Other <g@shared.example>",
		"X <only@name.example>", "Spacey <spaced@example.com>", "B <bob@old.example>", "N <nobody@example.com>",
		"Z <empty-proper@example.com>", "Carol C <carol@old.example>", "Dan <dan@old.example>", "Dan <dan@example.com>",
		"EVE <eve@old.example>", "Unknown <unknown@example.com>", "Broken <unterminated@example.com>",
	}
	m, err := Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	want := checkMailmap(t, text, contacts)
	for i, c := range contacts {
		if got := ours(m, c); got != want[i] {
			t.Errorf("%q: got %q, git says %q", c, got, want[i])
		}
	}
}

// TestResolveMatchesGitOnRandomMailmaps builds mailmaps of random lines
// over a few names and addresses, in random case, and asks git and us
// about every name and address.
func TestResolveMatchesGitOnRandomMailmaps(t *testing.T) {
	names := []string{"Ada", "ada", "Grace Hopper", "GRACE hopper", "Linus", "x"}
	emails := []string{"a@x", "A@X", "g@y", "G@y", "l@z", "q@q"}
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 26))
		pick := func(s []string) string { return s[rng.IntN(len(s))] }
		var lines []string
		for range 30 {
			switch rng.IntN(6) {
			case 0:
				lines = append(lines, fmt.Sprintf("%s <%s>", pick(names), pick(emails)))
			case 1:
				lines = append(lines, fmt.Sprintf("<%s> <%s>", pick(emails), pick(emails)))
			case 2:
				lines = append(lines, fmt.Sprintf("%s <%s> <%s>", pick(names), pick(emails), pick(emails)))
			case 3, 4:
				lines = append(lines, fmt.Sprintf("%s <%s> %s <%s>", pick(names), pick(emails), pick(names), pick(emails)))
			case 5:
				lines = append(lines, fmt.Sprintf("<%s> %s <%s>", pick(emails), pick(names), pick(emails)))
			}
		}
		text := strings.Join(lines, "\n") + "\n"
		var contacts []string
		for _, n := range names {
			for _, e := range emails {
				contacts = append(contacts, contact(n, e))
			}
		}
		m, err := Parse([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		want := checkMailmap(t, text, contacts)
		for i, c := range contacts {
			if got := ours(m, c); got != want[i] {
				t.Errorf("seed %d, %q: got %q, git says %q\n%s", seed, c, got, want[i], text)
			}
		}
	}
}

func TestAddLaterSourceOverrides(t *testing.T) {
	m, err := Parse([]byte("Old Name <a@x>\n<kept@x> <a@x>\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Add([]byte("New Name <a@x>\n")); err != nil {
		t.Fatal(err)
	}
	if name, email := m.Resolve("whoever", "A@x"); name != "New Name" || email != "kept@x" {
		t.Errorf("got %q <%s>, want New Name <kept@x>", name, email)
	}
}

func TestEmptyMapResolvesToInput(t *testing.T) {
	for _, m := range []*Map{nil, {}} {
		if name, email := m.Resolve("Ada", "ada@x"); name != "Ada" || email != "ada@x" {
			t.Errorf("%v: got %q <%s>", m, name, email)
		}
	}
	m, err := Parse(nil)
	if err != nil || m.Len() != 0 {
		t.Fatalf("Parse(nil): %v, %d entries", err, m.Len())
	}
}

func TestParseRefusesHugeMailmap(t *testing.T) {
	line := []byte("Someone <someone@example.com>\n")
	huge := make([]byte, 0, 10<<20)
	for len(huge)+len(line) <= 10<<20 {
		huge = append(huge, line...)
	}
	_, err := Parse(huge)
	if err == nil || !strings.Contains(err.Error(), "mailmap of") || !strings.Contains(err.Error(), "Try:") {
		t.Fatalf("Parse of 10 MB: %v", err)
	}
	m := &Map{}
	if err := m.Add(huge[:MaxBytes/2]); err != nil {
		t.Fatal(err)
	}
	if err := m.Add(huge[:MaxBytes/2+1]); err == nil {
		t.Error("two halves over the limit were read")
	}
}

// FuzzParse parses any text: no panic, and an address the text does not
// hold maps to itself.
func FuzzParse(f *testing.F) {
	f.Add([]byte("Ada <ada@x>\n<p@x> <c@x>\nP <p@x> C <c@x>\n# c\n"), "C", "c@x")
	f.Add([]byte("<> <>\n<a> b <>\n\x00<x> <y>\r\n"), "b", "")
	f.Fuzz(func(t *testing.T, data []byte, name, email string) {
		m, err := Parse(data)
		if err != nil {
			if len(data) <= MaxBytes {
				t.Fatalf("Parse refused %d bytes: %v", len(data), err)
			}
			return
		}
		n, e := m.Resolve(name, email)
		if !strings.Contains(strings.ToLower(string(data)), "<"+strings.ToLower(email)+">") && (n != name || e != email) {
			t.Fatalf("%q <%s> mapped to %q <%s> by a mailmap without that address", name, email, n, e)
		}
	})
}
