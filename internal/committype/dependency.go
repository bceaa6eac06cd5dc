package committype

import (
	"regexp"
	"strings"
)

var (
	// botPrefix is what Dependabot and Renovate may put before the update:
	// a Conventional Commits prefix, a [Security] tag.
	botPrefix = `^(?:\[[\w -]+\]\s*)?(?:[A-Za-z]+(?:\([\w./-]+\))?!?:\s*)?`
	// Dependabot: "Bump x from 1.2 to 1.3", "bump x from 1 to 2 in /web".
	bumpFromTo = regexp.MustCompile(`(?i)` + botPrefix + `(?:bump|bumps|bumped|upgrade|upgrades|update|updates)\s+(?:the\s+)?(\S+?)\s+from\s+(\S+)\s+to\s+(\S+?)(?:\s+in\s+\S+)?$`)
	// Renovate: "Update module x to v2", "update dependency x to v9.1.0",
	// "Update actions/checkout action to v4", "update x digest to abc1234".
	updateTo = regexp.MustCompile(`(?i)` + botPrefix + `(?:update|upgrade|bump)\s+(?:module|dependency|package|(?:docker|helm|npm|go|golang)\s+(?:tag|image|package|module)?)?\s*(\S+?)(?:\s+(?:action|digest|docker tag|commit hash|image))?\s+to\s+(v?\d\S*|[0-9a-f]{7,40})$`)
	// groupBump is Dependabot's grouped update: no single dependency.
	groupBump = regexp.MustCompile(`(?i)` + botPrefix + `bump\s+the\s+\S+\s+group\b`)
	// prNumber is GitHub's squash-merge suffix.
	prNumber = regexp.MustCompile(`\s*\(#\d+\)$`)
)

// Dependency reads a dependency bot's subject ("Bump x from 1.2 to 1.3",
// "chore(deps): update module x to v2") and gives the dependency's name and
// the versions, so that several bumps of one dependency can be told as one
// line. from is "" when the subject does not say. ok is false for any other
// subject, and for a grouped update that names no single dependency.
func Dependency(subject string) (name, from, to string, ok bool) {
	s := prNumber.ReplaceAllString(strings.TrimSpace(subject), "")
	s = strings.TrimSuffix(s, ".")
	if groupBump.MatchString(s) {
		return "", "", "", false
	}
	if m := bumpFromTo.FindStringSubmatch(s); m != nil {
		name, from, to = clean(m[1]), clean(m[2]), clean(m[3])
	} else if m := updateTo.FindStringSubmatch(s); m != nil {
		name, to = clean(m[1]), clean(m[2])
	}
	// "Bump version from 1.2 to 1.3" is a release, not a dependency.
	if name == "" || strings.EqualFold(name, "version") {
		return "", "", "", false
	}
	return name, from, to, true
}

// clean drops the quoting bots put around names and versions.
func clean(s string) string {
	s = strings.Trim(s, "`'\"[]")
	if i := strings.Index(s, "]("); i >= 0 { // a Markdown link: its text
		s = s[:i]
	}
	return strings.TrimSuffix(s, ",")
}
