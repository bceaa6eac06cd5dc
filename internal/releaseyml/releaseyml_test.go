package releaseyml

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

// docsSemver is the first example of GitHub's documentation.
const docsSemver = `# .github/release.yml

changelog:
  exclude:
    labels:
      - ignore-for-release
    authors:
      - octocat
  categories:
    - title: Breaking Changes 🛠
      labels:
        - Semver-Major
        - breaking-change
    - title: Exciting New Features 🎉
      labels:
        - Semver-Minor
        - enhancement
    - title: Other Changes
      labels:
        - "*"
`

// docsDependabot is the second: a catch-all first, that passes
// dependency updates on to a later category.
const docsDependabot = `# .github/release.yml

changelog:
  categories:
    - title: 🏕 Features
      labels:
        - '*'
      exclude:
        labels:
          - dependencies
    - title: 👒 Dependencies
      labels:
        - dependencies
`

// rapids is the configuration the RAPIDS repositories share: no catch-all.
const rapids = `# GitHub Auto-Generated Release Notes Configuration for RAPIDS
changelog:
  exclude:
    labels:
      - ignore-for-release
      - dependencies
    authors:
      - rapids-bot[bot]
      - dependabot[bot]
  categories:
    - title: 🚨 Breaking Changes
      labels:
        - breaking
    - title: 🐛 Bug Fixes
      labels:
        - bug
    - title: 🚀 New Features
      labels:
        - feature request
`

func TestParse(t *testing.T) {
	c, err := Parse(".github/release.yml", []byte(docsSemver))
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		Exclude: Exclude{Labels: []string{"ignore-for-release"}, Authors: []string{"octocat"}},
		Categories: []Category{
			{Title: "Breaking Changes 🛠", Labels: []string{"Semver-Major", "breaking-change"}},
			{Title: "Exciting New Features 🎉", Labels: []string{"Semver-Minor", "enhancement"}},
			{Title: "Other Changes", Labels: []string{"*"}},
		},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Parse = %+v\nwant %+v", c, want)
	}
}

func TestParseForms(t *testing.T) {
	tests := []struct {
		name, yml string
		want      *Config
	}{
		{"empty file", "", &Config{}},
		{"comments only", "# nothing yet\n", &Config{}},
		{"no changelog", "other: 1\n", &Config{}},
		{"null changelog", "changelog:\n", &Config{}},
		{"flow lists and a single string", "changelog:\n  exclude: {labels: [a, b], authors: bot}\n  categories:\n    - {title: All, labels: '*'}\n",
			&Config{Exclude: Exclude{Labels: []string{"a", "b"}, Authors: []string{"bot"}}, Categories: []Category{{Title: "All", Labels: []string{"*"}}}}},
		{"unknown keys ignored", "changelog:\n  template: x\n  categories:\n    - title: T\n      labels: [x]\n      color: red\n",
			&Config{Categories: []Category{{Title: "T", Labels: []string{"x"}}}}},
		{"null entries skipped", "changelog:\n  exclude:\n    labels:\n      -\n      - a\n",
			&Config{Exclude: Exclude{Labels: []string{"a"}}}},
		{"numbers as labels", "changelog:\n  categories:\n    - title: 2024\n      labels: [1, 2.0]\n",
			&Config{Categories: []Category{{Title: "2024", Labels: []string{"1", "2.0"}}}}},
		{"aliases", "x: &bots ['dependabot[bot]', 'renovate[bot]']\nchangelog:\n  exclude:\n    authors: *bots\n  categories:\n    - title: A\n      labels: [a]\n      exclude: {authors: *bots}\n",
			&Config{Exclude: Exclude{Authors: []string{"dependabot[bot]", "renovate[bot]"}}, Categories: []Category{{Title: "A", Labels: []string{"a"}, Exclude: Exclude{Authors: []string{"dependabot[bot]", "renovate[bot]"}}}}}},
		{"merge keys", "base: &base {labels: [x]}\nchangelog:\n  categories:\n    - <<: *base\n      title: T\n    - <<: *base\n      title: U\n      labels: [y]\n",
			&Config{Categories: []Category{{Title: "T", Labels: []string{"x"}}, {Title: "U", Labels: []string{"y"}}}}},
		{"a key twice: the last", "changelog:\n  exclude: {labels: [a]}\n  exclude: {labels: [b]}\n",
			&Config{Exclude: Exclude{Labels: []string{"b"}}}},
		{"release.yaml as dghubble/sling writes it", "changelog:\n  categories:\n  - title: Contributions\n    labels:\n    - '*'\n    exclude:\n      labels:\n      - dependencies\n      - no-release-note\n  - title: Dependencies\n    labels:\n    - dependencies\n",
			&Config{Categories: []Category{{Title: "Contributions", Labels: []string{"*"}, Exclude: Exclude{Labels: []string{"dependencies", "no-release-note"}}}, {Title: "Dependencies", Labels: []string{"dependencies"}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse(".github/release.yml", []byte(tt.yml))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c, tt.want) {
				t.Errorf("Parse = %+v\nwant %+v", c, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, yml, want string }{
		{"syntax", "changelog:\n  exclude:\n    labels: [a\n", ".github/release.yml:3: did not find expected"},
		{"syntax without a line from yaml", "changelog:\n  exclude:\n    labels: [d[b], r]\n", ".github/release.yml:3: did not find expected"},
		{"unknown anchor", "changelog:\n  exclude:\n\n    labels: *bots\n", ".github/release.yml:4: unknown anchor"},
		{"tab indentation", "changelog:\n\texclude: x\n", ".github/release.yml:2: "},
		{"root a list", "- a\n", ".github/release.yml:1: the file is a list, not a mapping"},
		{"changelog a string", "changelog: yes\n", ".github/release.yml:1: changelog is a string, not a mapping"},
		{"categories a mapping", "changelog:\n  categories:\n    title: x\n", ".github/release.yml:3: changelog.categories is a mapping, not a list"},
		{"category a string", "changelog:\n  categories:\n    - Features\n", ".github/release.yml:3: changelog.categories[0] is a string, not a mapping"},
		{"no title", "changelog:\n  categories:\n    - title: A\n      labels: [a]\n    - labels: [b]\n", ".github/release.yml:5: changelog.categories[1] has no title"},
		{"empty title", "changelog:\n  categories:\n    - title: ''\n      labels: [b]\n", ".github/release.yml:3: changelog.categories[0] has an empty title"},
		{"title a list", "changelog:\n  categories:\n    - title: [a]\n      labels: [b]\n", ".github/release.yml:3: changelog.categories[0].title is a list, not text"},
		{"no labels", "changelog:\n  categories:\n    - title: A\n", `.github/release.yml:3: changelog.categories[0] ("A") has no labels`},
		{"labels a mapping", "changelog:\n  categories:\n    - title: A\n      labels:\n        x: y\n", ".github/release.yml:5: changelog.categories[0].labels is a mapping, not a list"},
		{"label a mapping", "changelog:\n  exclude:\n    labels:\n      - a\n      - {b: c}\n", ".github/release.yml:5: changelog.exclude.labels holds a mapping, not a string"},
		{"exclude a list", "changelog:\n  exclude: [a]\n", ".github/release.yml:2: changelog.exclude is a list, not a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse(".github/release.yml", []byte(tt.yml))
			if err == nil {
				t.Fatalf("Parse = %+v, want an error", c)
			}
			if !strings.HasPrefix(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q, want it to start %q on one line", err, tt.want)
			}
		})
	}
}

// TestParseErrorsInLargeFiles checks the messages for files too large to
// locate the error in: yaml/v3's line, or none.
func TestParseErrorsInLargeFiles(t *testing.T) {
	pad := strings.Repeat("# a comment to make the file large\n", maxLocate/32)
	for _, tt := range []struct{ yml, want string }{
		{pad + "changelog:\n  exclude:\n    labels: [a\n", "release.yml: near line "},
		{pad + "changelog: *nope\n", "release.yml: unknown anchor 'nope' referenced; fix the YAML syntax"},
	} {
		_, err := Parse("release.yml", []byte(tt.yml))
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("error %v, want it to start %q", err, tt.want)
		}
	}
}

// laughs is a "billion laughs": each alias repeats the one before nine
// times, so that n levels stand for 9^n labels.
func laughs(n int) string {
	var b strings.Builder
	b.WriteString("l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= n; i++ {
		p := fmt.Sprintf("*l%d", i-1)
		fmt.Fprintf(&b, "l%d: &l%d [%s]\n", i, i, strings.Repeat(p+", ", 8)+p)
	}
	fmt.Fprintf(&b, "changelog:\n  exclude:\n    labels: *l%d\n", n)
	return b.String()
}

func TestParseBounded(t *testing.T) {
	// A list that nests lists is refused at once; one that aliases a long
	// flat list many times runs out of its budget.
	if _, err := Parse("release.yml", []byte(laughs(9))); err == nil || !strings.Contains(err.Error(), "holds a list") {
		t.Errorf("billion laughs: %v", err)
	}
	var b strings.Builder
	b.WriteString("l: &l [" + strings.Repeat("x, ", 999) + "x]\nchangelog:\n  categories:\n")
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&b, "    - {title: t%d, labels: *l}\n", i)
	}
	if _, err := Parse("release.yml", []byte(b.String())); err == nil || !strings.Contains(err.Error(), "more than 10000") {
		t.Errorf("aliased lists over the budget: %v", err)
	}
	// Merge keys that merge merges.
	b.Reset()
	b.WriteString("m0: &m0 {x: 1}\n")
	for i := 1; i < 9; i++ {
		p := fmt.Sprintf("*m%d", i-1)
		fmt.Fprintf(&b, "m%d: &m%d {<<: [%s]}\n", i, i, strings.Repeat(p+", ", 8)+p)
	}
	b.WriteString("changelog:\n  <<: *m8\n")
	start := time.Now()
	_, err := Parse("release.yml", []byte(b.String()))
	if err == nil || time.Since(start) > 5*time.Second {
		t.Errorf("nested merge keys: %v after %v", err, time.Since(start))
	}

	big := []byte("changelog:\n  exclude:\n    labels: [" + strings.Repeat("a,", MaxSize/2) + "]\n")
	if _, err := Parse("release.yml", big); err == nil || !strings.Contains(err.Error(), "over the 1 MiB") {
		t.Errorf("%d bytes: %v", len(big), err)
	}
}

// TestParseWorstCase measures a file just under MaxSize, the most Parse
// does.
func TestParseWorstCase(t *testing.T) {
	if testing.Short() {
		t.Skip("measures a megabyte of YAML")
	}
	doc := []byte("changelog:\n  exclude:\n    labels: [" + strings.Repeat("a,", MaxSize/2-20) + "]\n")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err := Parse("release.yml", doc)
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "more than 10000") {
		t.Errorf("%d labels: %v", MaxSize/2, err)
	}
	alloc := (after.TotalAlloc - before.TotalAlloc) >> 20
	t.Logf("%d bytes: %v, %d MiB allocated", len(doc), elapsed, alloc)
	if alloc > 512 || elapsed > 20*time.Second {
		t.Errorf("%d bytes took %v and %d MiB", len(doc), elapsed, alloc)
	}
}

func TestPlace(t *testing.T) {
	semver, err := Parse("semver", []byte(docsSemver))
	if err != nil {
		t.Fatal(err)
	}
	deps, err := Parse("deps", []byte(docsDependabot))
	if err != nil {
		t.Fatal(err)
	}
	noCatchAll, err := Parse("rapids", []byte(rapids))
	if err != nil {
		t.Fatal(err)
	}
	noCategories, err := Parse("flat", []byte("changelog:\n  exclude:\n    labels: [skip]\n    authors: [dependabot]\n"))
	if err != nil {
		t.Fatal(err)
	}
	wildAuthors, err := Parse("wild", []byte("changelog:\n  categories:\n    - title: Humans\n      labels: ['*']\n      exclude: {authors: ['*']}\n    - title: Anyone\n      labels: ['*']\n"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		c        *Config
		labels   []string
		author   string
		category string
		excluded bool
	}{
		{"first matching category", semver, []string{"enhancement", "breaking-change"}, "alice", "Breaking Changes 🛠", false},
		{"second category", semver, []string{"enhancement"}, "alice", "Exciting New Features 🎉", false},
		{"label case", semver, []string{"SEMVER-minor"}, "alice", "Exciting New Features 🎉", false},
		{"catch-all", semver, []string{"bug"}, "alice", "Other Changes", false},
		{"catch-all takes no labels", semver, nil, "", "Other Changes", false},
		{"excluded label wins over categories", semver, []string{"breaking-change", "Ignore-For-Release"}, "alice", "", true},
		{"excluded author", semver, []string{"enhancement"}, "octocat", "", true},
		{"author case", semver, nil, "OctoCat", "", true},
		{"category exclusion passes on", deps, []string{"dependencies"}, "dependabot[bot]", "👒 Dependencies", false},
		{"catch-all first", deps, []string{"bug"}, "alice", "🏕 Features", false},
		{"no category takes it", noCatchAll, []string{"documentation"}, "alice", "", true},
		{"unlabelled without a catch-all", noCatchAll, nil, "alice", "", true},
		{"app login whole", noCatchAll, []string{"bug"}, "dependabot[bot]", "", true},
		{"app login without [bot] is another login", noCategories, []string{"x"}, "dependabot[bot]", "", false},
		{"bare login", noCategories, nil, "dependabot", "", true},
		{"no categories", noCategories, []string{"bug"}, "alice", "", false},
		{"no categories, excluded", noCategories, []string{"skip"}, "alice", "", true},
		{"wildcard author", wildAuthors, nil, "alice", "Anyone", false},
		{"wildcard author, unknown author", wildAuthors, nil, "", "Anyone", false},
		{"nil config", nil, []string{"x"}, "alice", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			category, excluded := tt.c.Place(tt.labels, tt.author)
			if category != tt.category || excluded != tt.excluded {
				t.Errorf("Place(%q, %q) = %q, %v; want %q, %v", tt.labels, tt.author, category, excluded, tt.category, tt.excluded)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{docsSemver, docsDependabot, rapids, laughs(3), "changelog:\n  categories:\n    - <<: *x\n", "a: &a [*a]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("release.yml", data)
		if err != nil {
			if c != nil {
				t.Fatalf("error %v with a config", err)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "release.yml:") || strings.Contains(msg, "\n") {
				t.Fatalf("error %q", msg)
			}
			return
		}
		n := len(c.Exclude.Labels) + len(c.Exclude.Authors)
		for _, cat := range c.Categories {
			if strings.TrimSpace(cat.Title) == "" {
				t.Fatalf("category without a title in %+v", c)
			}
			n += 1 + len(cat.Labels) + len(cat.Exclude.Labels) + len(cat.Exclude.Authors)
		}
		if n > maxEntries {
			t.Fatalf("%d entries", n)
		}
		category, excluded := c.Place([]string{"bug"}, "alice")
		if excluded && category != "" {
			t.Fatalf("excluded into %q", category)
		}
		if category != "" && !slicesHasTitle(c.Categories, category) {
			t.Fatalf("category %q is none of the file's", category)
		}
	})
}

func slicesHasTitle(cats []Category, title string) bool {
	for _, c := range cats {
		if c.Title == title {
			return true
		}
	}
	return false
}

// TestExcludesAuthor: what can be told of a change whose labels are not
// known: only its author's exclusion.
func TestExcludesAuthor(t *testing.T) {
	cfg, err := Parse("release.yml", []byte("changelog:\n  exclude:\n    labels: [skip]\n    authors: [dependabot, renovate]\n"))
	if err != nil {
		t.Fatal(err)
	}
	for author, want := range map[string]bool{"dependabot": true, "Renovate": true, "octocat": false, "": false, "dependabot[bot]": false} {
		if got := cfg.ExcludesAuthor(author); got != want {
			t.Errorf("ExcludesAuthor(%q) = %v, want %v", author, got, want)
		}
	}
	var none *Config
	if none.ExcludesAuthor("dependabot") {
		t.Error("a nil Config excludes nothing")
	}
}
