package cmd

import (
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/digest-cli/digest/internal/help"
	"github.com/digest-cli/digest/internal/iostreams"
)

// TestEveryFlagHasHelpText fails when a flag of any command, or any
// command, has no help text: `digest CMD --help` is the flags' manual.
func TestEveryFlagHasHelpText(t *testing.T) {
	ios, _, _ := iostreams.Test()
	root := NewRootCmd(NewFactory(ios, "test"))
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		if c.Short == "" {
			t.Errorf("%q has no short help", c.CommandPath())
		}
		for _, fs := range []*pflag.FlagSet{c.LocalFlags(), c.PersistentFlags()} {
			fs.VisitAll(func(f *pflag.Flag) {
				n++
				if strings.TrimSpace(f.Usage) == "" {
					t.Errorf("%s --%s has no help text", c.CommandPath(), f.Name)
				}
			})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if n < 100 {
		t.Fatalf("%d flags seen: the walk missed the commands", n)
	}
}

// TestHelpTopics: `digest help` lists every topic; `digest help TOPIC`
// writes the page's Markdown to a pipe and lays it out on a terminal;
// an unknown name is a usage error.
func TestHelpTopics(t *testing.T) {
	h := newHarness(t)
	res := h.run(context.Background(), "help")
	for _, tp := range help.Topics() {
		if !strings.Contains(res.out, "  "+tp.Name+" ") {
			t.Errorf("digest help does not list %s:\n%s", tp.Name, res.out)
		}
		res := h.run(context.Background(), "help", tp.Name)
		md, _ := help.Markdown(tp.Name)
		if res.code != 0 || res.out != md {
			t.Errorf("digest help %s | cat: exit %d, %d bytes; want the page's %d bytes of Markdown", tp.Name, res.code, len(res.out), len(md))
		}
	}
	ios, out, _ := iostreams.Test()
	ios.SetStdoutTTY(true)
	f := NewFactory(ios, "test")
	f.Getenv = func(string) string { return "" }
	if code := Execute(context.Background(), f, []string{"help", "datasets"}); code != 0 || !strings.Contains(out.String(), "\x1b[") || strings.Contains(out.String(), "```") {
		t.Errorf("digest help datasets on a terminal: exit %d, want the page laid out in colour:\n%.300s", code, out.String())
	}
	res = h.run(context.Background(), "help", "nosuch")
	if res.code != 2 || !strings.Contains(res.errOut, `no command or help topic "nosuch". Try: digest help`) {
		t.Errorf("digest help nosuch: exit %d, %q; want a usage error", res.code, res.errOut)
	}
}
