// Package help holds digest's reference manual as help topics: Markdown
// pages embedded from topics/*.md (the files a reader of the repository
// edits), listed in the order a newcomer reads them, and rendered for a
// for a terminal by glamour; a pipe or a file gets the Markdown itself.
package help

import (
	"embed"
	"fmt"
	"strings"

	"github.com/charmbracelet/glamour"
	"github.com/charmbracelet/glamour/styles"
)

//go:embed topics/*.md
var files embed.FS

// Topic is one page of the manual: `digest help NAME`.
type Topic struct {
	// Name is what follows `digest help`, and the page's file name
	// without .md.
	Name string
	// Short is the line `digest help` lists the topic with.
	Short string
}

// topics are the pages, in reading order.
var topics = []Topic{
	{"commits", "Which commits summarize reads, and what is sent for each"},
	{"release-notes", "Release notes: layouts, templates, people, versions, the forge"},
	{"datasets", "Eval datasets, promptfoo configs, assertions, metrics and judges"},
	{"reports", "Eval reports: figures, formats, the HTML grid, CI"},
	{"limits", "Models, their request rules, limits and retries"},
	{"batch-runs", "Batch runs: half the price, answers within a day"},
	{"caching", "The cache: keys, old runs, payloads in an object store, SQL views"},
	{"machines", "Many machines sharing one PostgreSQL database"},
	{"exit-codes", "Exit codes and error messages"},
	{"guarantees", "What digest promises, and the test behind each promise"},
	{"performance", "Measured speed, memory and cost, with the commands"},
	{"development", "Building, testing and the layout of the code"},
}

// Topics returns the pages in reading order.
func Topics() []Topic { return append([]Topic(nil), topics...) }

// Markdown returns the page of the named topic.
func Markdown(name string) (string, error) {
	for _, t := range topics {
		if t.Name == name {
			b, err := files.ReadFile("topics/" + name + ".md")
			return string(b), err
		}
	}
	names := make([]string, len(topics))
	for i, t := range topics {
		names[i] = t.Name
	}
	return "", fmt.Errorf("no help topic %q. Try: one of %s", name, strings.Join(names, ", "))
}

// Render lays out a page for a terminal width columns wide: with colour
// and styles when color is set, else in plain text (NO_COLOR). Lines
// carry no trailing padding.
func Render(markdown string, width int, color bool) (string, error) {
	style := styles.NoTTYStyle
	if color {
		style = styles.DarkStyle
	}
	r, err := glamour.NewTermRenderer(glamour.WithStandardStyle(style), glamour.WithWordWrap(max(width, 40)-4))
	if err != nil {
		return "", err
	}
	out, err := r.Render(markdown)
	if err != nil {
		return "", err
	}
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n"), nil
}
