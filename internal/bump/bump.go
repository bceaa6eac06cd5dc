// Package bump gives the version a release should take from the last
// release's tag and the kinds of change since, the way release tools that
// read Conventional Commits do.
package bump

import (
	"fmt"
	"math"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// The levels of a change, from the least to the most.
const (
	Patch = "patch"
	Minor = "minor"
	Major = "major"
)

// First is the version of a project's first release, when it has no tag
// yet: a 0.x, since nothing is promised of a first version, with the "v"
// most tags carry and Go modules require. git-cliff gives "0.1.0".
const First = "v0.1.0"

// maxTag is the longest tag read; a version tag is a few dozen bytes.
const maxTag = 256

// Change is one change since the last release, as release notes classify
// it.
type Change struct {
	// Breaking is true for a change that breaks what users rely on: "type!:"
	// or a BREAKING CHANGE footer.
	Breaking bool
	// Type is the Conventional Commits type, "feat", "fix" and so on.
	Type string
}

// Level is the level of the largest of the changes: major for a breaking
// change, minor for a feature ("feat", in any case), patch for anything
// else, and "" for no changes.
func Level(changes []Change) string {
	level := ""
	for _, c := range changes {
		switch {
		case c.Breaking:
			return Major
		case strings.EqualFold(strings.TrimSpace(c.Type), "feat"):
			level = Minor
		case level == "":
			level = Patch
		}
	}
	return level
}

// Next gives the version after last for these changes. last is the last
// release's tag; what comes before its version is kept, so "v1.2.3" gives
// "v1.3.0" and "release-1.2.3" "release-1.3.0", and so is a Go module's
// directory, "cli/v1.2.3".
//
// From 1.0.0 on, a breaking change bumps the major version, a feature the
// minor and anything else the patch. Before 1.0.0 a breaking change bumps
// the minor version and anything else the patch, as Cargo and the
// semantic versioning specification read 0.x versions (0.y.z may change
// at any time; the minor is what users pin). git-cliff's defaults differ:
// it bumps 0.x as it bumps 1.x, breaking changes to 1.0.0 included, unless
// configured with features_always_bump_minor = false and
// breaking_always_bump_major = false.
//
// A last version with a pre-release is released rather than passed, as
// npm's semver increments: "1.2.0-rc.1" gives "1.2.0" for a fix or a
// feature and "2.0.0-rc.1" gives "2.0.0" for anything; "1.2.1-rc.1" gives
// "1.3.0" for a feature, since 1.2.1 is too small. git-cliff instead
// advances the pre-release ("1.0.0-alpha.1" to "1.0.0-alpha.2"). Build
// metadata ("+build.5") is dropped. With no changes Next gives last as it
// is, and with no last tag (last "") First, whatever the changes.
//
// last must end in a semantic version MAJOR.MINOR.PATCH; anything else,
// "v1.2" or "nightly", is an error naming it.
func Next(last string, changes []Change) (string, error) {
	if strings.TrimSpace(last) == "" {
		return First, nil
	}
	prefix, v, err := parse(last)
	if err != nil {
		return "", err
	}
	level := applied(v, Level(changes))
	if level == "" {
		return last, nil
	}
	return inc(prefix, v, level, last)
}

// Applied is the level Next raises last by: Level's, read as 0.x
// versions are ("" when nothing changed, or with no last tag). An
// unreadable last gives Level's.
func Applied(last string, changes []Change) string {
	level := Level(changes)
	_, v, err := parse(last)
	if err != nil || strings.TrimSpace(last) == "" {
		return level
	}
	return applied(v, level)
}

// applied reads a level as Next applies it to v: before 1.0.0 a breaking
// change bumps the minor version and anything else the patch.
func applied(v *semver.Version, level string) string {
	if v.Major() != 0 || level == "" {
		return level
	}
	if level == Major {
		return Minor
	}
	return Patch
}

// Force gives the version after last at an explicit level, "major",
// "minor" or "patch", with the rules of Next for prefixes and
// pre-releases but not its reading of 0.x versions: "v0.4.2" forced major
// is "v1.0.0". With no last tag it counts from "v0.0.0": "v1.0.0",
// "v0.1.0" or "v0.0.1".
func Force(last, level string) (string, error) {
	if level != Major && level != Minor && level != Patch {
		return "", fmt.Errorf("bump level %q: want major, minor or patch", level)
	}
	if strings.TrimSpace(last) == "" {
		last = "v0.0.0"
	}
	prefix, v, err := parse(last)
	if err != nil {
		return "", err
	}
	return inc(prefix, v, level, last)
}

// inc raises v by level, releasing a pre-release that is already at that
// level or above.
func inc(prefix string, v *semver.Version, level, last string) (string, error) {
	pre := v.Prerelease() != ""
	var next semver.Version
	switch level {
	case Major:
		if v.Major() == math.MaxUint64 {
			return "", overflow(last)
		}
		if pre && v.Minor() == 0 && v.Patch() == 0 {
			next = *semver.New(v.Major(), 0, 0, "", "")
		} else {
			next = v.IncMajor()
		}
	case Minor:
		if v.Minor() == math.MaxUint64 {
			return "", overflow(last)
		}
		if pre && v.Patch() == 0 {
			next = *semver.New(v.Major(), v.Minor(), 0, "", "")
		} else {
			next = v.IncMinor()
		}
	default:
		if v.Patch() == math.MaxUint64 {
			return "", overflow(last)
		}
		next = v.IncPatch() // which releases a pre-release
	}
	return prefix + next.String(), nil
}

func overflow(last string) error {
	return fmt.Errorf("tag %q: its version cannot be raised further; tag the next release by hand", last)
}

// parse splits a tag into what comes before its version and the version:
// the version starts at the first digit that does not follow a digit or a
// dot and from which the rest of the tag is MAJOR.MINOR.PATCH with an
// optional -pre-release and +metadata.
func parse(tag string) (string, *semver.Version, error) {
	if len(tag) > maxTag {
		return "", nil, fmt.Errorf("tag %.40q...: %d bytes, too long for a version tag; choose the version tags with --tag-pattern", tag, len(tag))
	}
	for i := 0; i < len(tag); i++ {
		if tag[i] < '0' || tag[i] > '9' {
			continue
		}
		if i > 0 && (tag[i-1] >= '0' && tag[i-1] <= '9' || tag[i-1] == '.') {
			continue
		}
		if v, err := semver.StrictNewVersion(tag[i:]); err == nil && wellFormed(v, tag[i:]) {
			return tag[:i], v, nil
		}
	}
	return "", nil, fmt.Errorf("tag %q does not end in a version MAJOR.MINOR.PATCH such as v1.2.3. Try: --tag-pattern '^v?[0-9]+\\.[0-9]+\\.[0-9]+$' to count from such tags only, or --tag NAME to name the next release yourself", tag)
}

// wellFormed reports whether v reads s exactly: Masterminds' strict parser
// lets through an empty pre-release ("1.2.3-") and empty identifiers
// ("1.2.3-rc..1"), which the specification forbids.
func wellFormed(v *semver.Version, s string) bool {
	if v.String() != s {
		return false
	}
	for _, part := range []string{v.Prerelease(), v.Metadata()} {
		if part == "" {
			continue
		}
		for _, id := range strings.Split(part, ".") {
			if id == "" {
				return false
			}
		}
	}
	return true
}
