// Package releaseyml reads a repository's .github/release.yml, the file
// that configures GitHub's automatically generated release notes, and
// places a pull request in its categories the way GitHub does, so that
// notes digest writes group and leave out what the project's own
// generated notes would.
package releaseyml

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Paths are where a repository keeps the configuration, in the order
// digest looks: GitHub documents .github/release.yml and reads the .yaml
// spelling too.
var Paths = []string{".github/release.yml", ".github/release.yaml"}

// MaxSize is the largest file Parse reads. Real files are a few hundred
// bytes; a megabyte of YAML already takes yaml/v3 about 100 MiB of
// allocations to parse.
const MaxSize = 1 << 20

// maxEntries bounds the titles, labels and logins Parse reads, counting
// each time an alias repeats them, so that a file of aliases of aliases (a
// "billion laughs") cannot make it build a billion strings.
const maxEntries = 10000

// Wildcard is the label or login that matches every pull request.
const Wildcard = "*"

// Config is the changelog section of a release.yml.
type Config struct {
	// Exclude leaves pull requests out of the notes altogether.
	Exclude Exclude
	// Categories are the notes' sections in the file's order; none means
	// one list of every pull request not excluded.
	Categories []Category
}

// Exclude names the pull requests to leave out: those with any of Labels,
// or by any of Authors (GitHub logins, "dependabot[bot]" for an app).
type Exclude struct {
	Labels  []string
	Authors []string
}

// Category is one section of the notes.
type Category struct {
	// Title is the section's heading.
	Title string
	// Labels qualify a pull request for the section; "*" qualifies every
	// pull request.
	Labels []string
	// Exclude keeps pull requests out of this section only; they may
	// still go to a later one.
	Exclude Exclude
}

// Parse reads the release.yml in data; name is its path, for messages.
// It reads changelog.exclude.labels and .authors, and for each of
// changelog.categories its title, labels, exclude.labels and
// exclude.authors, and ignores other keys as GitHub does. Every list may
// also be given as a single string (`labels: '*'`). A category needs a
// title and labels, as GitHub's documentation requires. Aliases and merge
// keys are followed, within a budget of 10,000 entries; a file over
// MaxSize is refused. A file without a changelog section is an empty
// Config.
func Parse(name string, data []byte) (*Config, error) {
	if len(data) > MaxSize {
		return nil, fmt.Errorf("%s: %d bytes, over the %d MiB a release.yml may have; shorten it or remove it", name, len(data), MaxSize>>20)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlError(name, data, err)
	}
	p := &parser{name: name}
	root := p.deref(&doc)
	c := &Config{}
	if root == nil || root.Kind == 0 || isNull(root) {
		return c, p.err
	}
	if root.Kind != yaml.MappingNode {
		return nil, p.errorf(root, "the file is %s, not a mapping; start it with `changelog:`", kind(root))
	}
	changelog := p.get(root, "changelog")
	if changelog == nil || isNull(changelog) {
		return c, p.err
	}
	if changelog.Kind != yaml.MappingNode {
		return nil, p.errorf(changelog, "changelog is %s, not a mapping; give it exclude and categories keys", kind(changelog))
	}
	c.Exclude = p.exclude(p.get(changelog, "exclude"), "changelog.exclude")
	if cats := p.get(changelog, "categories"); cats != nil && !isNull(cats) {
		if cats.Kind != yaml.SequenceNode {
			return nil, p.errorf(cats, "changelog.categories is %s, not a list; write each category as `- title: ...`", kind(cats))
		}
		for i, item := range cats.Content {
			c.Categories = append(c.Categories, p.category(item, i))
			if p.err != nil {
				break
			}
		}
	}
	if p.err != nil {
		return nil, p.err
	}
	return c, nil
}

// Place gives the section GitHub puts a pull request with these labels
// by this author (a GitHub login, "" when unknown) in, following GitHub's
// rules:
//
//   - a pull request with a label in changelog.exclude.labels, or by an
//     author in changelog.exclude.authors, is left out: excluded is true;
//   - with no categories, every other pull request is listed under no
//     title: category is "" and excluded false;
//   - else the first category in the file's order whose labels it has, or
//     whose labels hold "*", and whose own exclude lists it matches
//     neither, takes it; a category's exclusion only passes it on to the
//     categories after;
//   - a pull request no category takes is left out: excluded is true.
//     GitHub shows it nowhere, neither under "Other Changes" nor under no
//     title, which is why configurations end with a "*" category.
//
// Labels and logins are matched without regard to case, as GitHub names
// both: two labels of one repository never differ only in case. Logins are
// matched whole, so "dependabot" does not exclude "dependabot[bot]". "*"
// in an exclude list matches every pull request, as in a category's
// labels; GitHub documents it only for the latter. A nil Config places
// every pull request under no title.
func (c *Config) Place(labels []string, author string) (category string, excluded bool) {
	if c == nil {
		return "", false
	}
	if c.Exclude.matches(labels, author) {
		return "", true
	}
	if len(c.Categories) == 0 {
		return "", false
	}
	for _, cat := range c.Categories {
		if anyLabel(cat.Labels, labels) && !cat.Exclude.matches(labels, author) {
			return cat.Title, false
		}
	}
	return "", true
}

// ExcludesAuthor reports whether the configuration leaves out every pull
// request of author, whatever its labels: what can be told of a change
// whose labels are not known.
func (c *Config) ExcludesAuthor(author string) bool {
	if c == nil {
		return false
	}
	for _, a := range c.Exclude.Authors {
		if a == Wildcard || author != "" && strings.EqualFold(a, author) {
			return true
		}
	}
	return false
}

// matches reports whether a pull request with these labels by author is
// one e names.
func (e Exclude) matches(labels []string, author string) bool {
	if anyLabel(e.Labels, labels) {
		return true
	}
	for _, a := range e.Authors {
		if a == Wildcard || author != "" && strings.EqualFold(a, author) {
			return true
		}
	}
	return false
}

// anyLabel reports whether one of have is in want, or want holds "*".
func anyLabel(want, have []string) bool {
	for _, w := range want {
		if w == Wildcard {
			return true
		}
		for _, h := range have {
			if strings.EqualFold(w, h) {
				return true
			}
		}
	}
	return false
}

// parser walks the YAML nodes, keeping the first error and the budget.
type parser struct {
	name    string
	entries int
	err     error
}

func (p *parser) errorf(n *yaml.Node, format string, args ...any) error {
	if p.err == nil {
		p.err = fmt.Errorf("%s:%d: %s", p.name, n.Line, fmt.Sprintf(format, args...))
	}
	return p.err
}

// spend counts one entry read, and fails past the budget.
func (p *parser) spend(n *yaml.Node) bool {
	p.entries++
	if p.entries > maxEntries {
		p.errorf(n, "more than %d titles, labels and logins, counting what aliases repeat; write the lists out without nested aliases", maxEntries)
		return false
	}
	return true
}

// deref follows aliases and documents to the node they stand for.
func (p *parser) deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && i < 100; i++ {
		switch {
		case n.Kind == yaml.AliasNode:
			n = n.Alias
		case n.Kind == yaml.DocumentNode:
			if len(n.Content) == 0 {
				return nil
			}
			n = n.Content[0]
		default:
			return n
		}
	}
	return n
}

// get gives the value of key in mapping m, following merge keys
// (<<: *base) the way YAML decoders do: the mapping's own keys win, then
// the merged mappings' in order. Of a key written twice the last counts,
// as in the Ruby YAML parser GitHub runs.
func (p *parser) get(m *yaml.Node, key string) *yaml.Node {
	return p.getDepth(m, key, 0)
}

func (p *parser) getDepth(m *yaml.Node, key string, depth int) *yaml.Node {
	m = p.deref(m)
	if m == nil || m.Kind != yaml.MappingNode || depth > 8 || p.err != nil {
		return nil
	}
	var merges []*yaml.Node
	var own *yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := p.deref(m.Content[i])
		if k == nil || k.Kind != yaml.ScalarNode {
			continue
		}
		if k.Tag == "!!merge" {
			merges = append(merges, m.Content[i+1])
			continue
		}
		if k.Value == key {
			own = m.Content[i+1]
		}
	}
	if own != nil {
		return p.deref(own)
	}
	for _, src := range merges {
		if !p.spend(src) {
			return nil
		}
		src = p.deref(src)
		if src != nil && src.Kind == yaml.SequenceNode {
			for _, e := range src.Content {
				if v := p.getDepth(e, key, depth+1); v != nil {
					return v
				}
			}
			continue
		}
		if v := p.getDepth(src, key, depth+1); v != nil {
			return v
		}
	}
	return nil
}

func (p *parser) category(n *yaml.Node, i int) Category {
	where := "changelog.categories[" + strconv.Itoa(i) + "]"
	item := p.deref(n)
	if item == nil || item.Kind != yaml.MappingNode {
		if item == nil {
			item = n
		}
		p.errorf(item, "%s is %s, not a mapping; give it a title and labels", where, kind(item))
		return Category{}
	}
	if !p.spend(item) {
		return Category{}
	}
	var cat Category
	title := p.get(item, "title")
	switch {
	case title == nil || isNull(title):
		p.errorf(item, "%s has no title; GitHub requires one", where)
		return Category{}
	case title.Kind != yaml.ScalarNode:
		p.errorf(title, "%s.title is %s, not text; write the heading as a string", where, kind(title))
		return Category{}
	}
	if cat.Title = title.Value; strings.TrimSpace(cat.Title) == "" {
		p.errorf(title, "%s has an empty title; GitHub requires one", where)
		return Category{}
	}
	labels := p.get(item, "labels")
	if labels == nil || isNull(labels) {
		p.errorf(item, "%s (%q) has no labels; GitHub requires them, \"*\" for every pull request", where, cat.Title)
		return Category{}
	}
	cat.Labels = p.list(labels, where+".labels")
	cat.Exclude = p.exclude(p.get(item, "exclude"), where+".exclude")
	return cat
}

func (p *parser) exclude(n *yaml.Node, where string) Exclude {
	if n == nil || isNull(n) || p.err != nil {
		return Exclude{}
	}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "%s is %s, not a mapping; give it labels and authors keys", where, kind(n))
		return Exclude{}
	}
	return Exclude{
		Labels:  p.list(p.get(n, "labels"), where+".labels"),
		Authors: p.list(p.get(n, "authors"), where+".authors"),
	}
}

// list reads a list of strings, or one string standing for a list of one;
// null entries are skipped.
func (p *parser) list(n *yaml.Node, where string) []string {
	if n == nil || isNull(n) || p.err != nil {
		return nil
	}
	if n.Kind == yaml.ScalarNode {
		if !p.spend(n) {
			return nil
		}
		return []string{n.Value}
	}
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "%s is %s, not a list; write `[a, b]` or one `- a` per line", where, kind(n))
		return nil
	}
	var out []string
	for _, e := range n.Content {
		e := p.deref(e)
		if e == nil || isNull(e) {
			continue
		}
		if e.Kind != yaml.ScalarNode {
			p.errorf(e, "%s holds %s, not a string; quote it", where, kind(e))
			return nil
		}
		if !p.spend(e) {
			return nil
		}
		out = append(out, e.Value)
	}
	return out
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// kind names what a node is, for messages.
func kind(n *yaml.Node) string {
	switch {
	case n == nil:
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind == yaml.AliasNode:
		return "an alias"
	case n.Tag == "!!null":
		return "empty"
	}
	return "a string"
}

// yamlLine is the line yaml/v3 names in some of its syntax errors: the
// line where the construct that failed began, counted from 0 or from 1
// depending on the error, or none when that is the first line.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// maxLocate is the largest file whose syntax errors yamlError locates
// itself rather than trust yaml/v3's line.
const maxLocate = 64 << 10

// yamlError turns a yaml/v3 error into one line naming the file and line.
func yamlError(name string, data []byte, err error) error {
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	yamlsLine := ""
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		yamlsLine, msg = m[1], msg[len(m[0]):]
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	if line := locate(data, err.Error()); line > 0 {
		return fmt.Errorf("%s:%d: %s; fix the YAML syntax", name, line, msg)
	}
	if yamlsLine != "" {
		return fmt.Errorf("%s: near line %s: %s; fix the YAML syntax", name, yamlsLine, msg)
	}
	return fmt.Errorf("%s: %s; fix the YAML syntax", name, msg)
}

// locate finds the line of a syntax error yaml/v3 gives no line for ("did
// not find expected ',' or ']'", "unknown anchor"): the fewest first lines
// of data that fail with the same message, found by bisection in a dozen
// or so parses of files up to 64 KiB. 0 when it cannot tell.
func locate(data []byte, msg string) int {
	if len(data) > maxLocate {
		return 0
	}
	var ends []int // ends[i] is the offset just past line i+1
	for i, b := range data {
		if b == '\n' {
			ends = append(ends, i+1)
		}
	}
	if len(ends) == 0 || ends[len(ends)-1] != len(data) {
		ends = append(ends, len(data))
	}
	fails := func(lines int) bool {
		var n yaml.Node
		err := yaml.Unmarshal(data[:ends[lines-1]], &n)
		return err != nil && err.Error() == msg
	}
	lo, hi := 1, len(ends) // fails(hi) holds
	if !fails(hi) {
		return 0
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if fails(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}
