package summarize

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/digest-cli/digest/internal/bump"
	"github.com/digest-cli/digest/internal/changelog"
	"github.com/digest-cli/digest/internal/committype"
	"github.com/digest-cli/digest/internal/forge"
	"github.com/digest-cli/digest/internal/forgeapi"
	"github.com/digest-cli/digest/internal/history"
	"github.com/digest-cli/digest/internal/mergemsg"
	"github.com/digest-cli/digest/internal/people"
	"github.com/digest-cli/digest/internal/releaseyml"
)

// Release holds what shapes the notes as a release: which tags make
// sections, what the section no tag holds yet is called, and who is left
// out. The zero value makes a section of every tag, as before.
type Release struct {
	// Tags chooses the tags that make sections (--tag-pattern,
	// --ignore-tags); nil: every tag. A commit belongs to the first
	// release, in history order, whose history holds it.
	Tags func(tag string) bool
	// Skip names releases left out with their commits (--skip-tags).
	Skip func(tag string) bool
	// Contributors asks for each section's new contributors, which read
	// the authors of the repository's whole history (on git.git, 81,000
	// commits, about 2 s): set when the layout shows them.
	Contributors bool
	// Tag names the commits no tag holds yet (--tag), as the release
	// about to be made; "": Unreleased.
	Tag string
	// Bump names them by the next version instead (--bump): "auto"
	// counts it from the kinds of change since the last tag (bump.Next),
	// "major", "minor" or "patch" raises the last tag so (bump.Force);
	// "": no bump.
	Bump string
	// Forge, when set, gives the client of a forge's API to ask what the
	// local history cannot tell: logins, pull requests' titles and links,
	// labels (forgeapi). It returns nil when there is none to ask (no
	// token, or a forge without an API digest knows).
	Forge func(forge.Forge) (*forgeapi.Client, error)
	// ExcludeAuthor leaves out the commits of authors it matches, as
	// "Name <email>" (after the mailmap) or as their login: they are
	// neither summarized nor listed (--exclude-author).
	ExcludeAuthor *regexp.Regexp
}

// BumpAuto is Release.Bump's value that counts the next version from the
// kinds of change; BumpLevels lists every value --bump takes.
const BumpAuto = "auto"

// BumpLevels are the values of --bump.
var BumpLevels = []string{BumpAuto, bump.Major, bump.Minor, bump.Patch}

// Bumped is a repository's next version, as --bump counts it.
type Bumped struct {
	Repo string
	Last string // the last release, "" when there is none
	Next string
	// Level is the change that decided it: major, minor, patch, or ""
	// when nothing was changed since Last (Next is then Last).
	Level string
}

// DefaultTagPattern is the tags that make sections unless --tag-pattern
// says otherwise: those that name a version (v1.2.0, 1.2, release-1.2.3,
// cli/v0.4.0), not nightly-1 or latest.
const DefaultTagPattern = `^[^0-9]*[0-9]+\.[0-9]+`

// credit is who a commit is credited to, as the notes name them: its
// author through the mailmap, their login where their address or a
// fork's name tells it; for a merge of a pull request, whoever wrote the
// branch it merged (its second parent's author), not whoever pressed the
// button, as GitHub's notes name the request's author. pr is the request
// the message names, ok false when it names none.
func (rr *repoRun) credit(c history.Commit) (name, email, login string, pr mergemsg.PR, ok bool) {
	raw := c.AuthorEmail
	name, email = c.AuthorName, c.AuthorEmail
	pr, ok = mergemsg.Parse(c.Message)
	merge := ok && c.Parents > 1
	if merge {
		if n, m, found := rr.repo.MergedAuthor(c); found {
			name, email, raw = n, m, m
		}
	}
	name, email = rr.mailmap.Resolve(name, email)
	switch fork := merge && pr.Owner != "" && !strings.EqualFold(pr.Owner, rr.owner()) && people.ValidLogin(pr.Owner); {
	case fork:
		// "from owner/branch" of a fork: the fork's owner opened it,
		// whoever committed last on the branch.
		login = pr.Owner
	default:
		if l, found := people.Login(email); found {
			login = l
		} else if l, found := people.Login(raw); found {
			login = l
		}
	}
	return name, email, login, pr, ok
}

// excluded reports whether --exclude-author leaves the commit out: its
// credit, as "Name <email>" or as a login, matches.
func (rr *repoRun) excluded(opts Options, c history.Commit) bool {
	re := opts.Release.ExcludeAuthor
	if re == nil {
		return false
	}
	name, email, login, _, _ := rr.credit(c)
	return re.MatchString(name+" <"+email+">") || login != "" && re.MatchString(login)
}

// describe fills in what an entry shows beside its summary: whom it is
// credited to (see credit), a bot, the title (a merged pull request's,
// else the subject), the request the commit merged, linked on the forge,
// and the kind of change its message tells, which a summary replaces.
func (rr *repoRun) describe(e *changelog.Entry, c history.Commit) {
	var pr mergemsg.PR
	var merged bool
	e.Author, e.AuthorEmail, e.Login, pr, merged = rr.credit(c)
	e.Merge = c.Parents > 1
	e.Bot = people.IsBot(e.Author, e.AuthorEmail)
	e.Title = c.Subject
	// Until a summary says otherwise: --bump counts a commit whose
	// summary failed by its message.
	k := committype.Classify(c.Message, nil)
	e.Type, e.Scope, e.Breaking = k.Type, k.Scope, k.Breaking
	if merged {
		if pr.Title != "" {
			e.Title = pr.Title
		}
		e.PR = pr.Number
		if rr.linked {
			e.PRURL, _ = rr.forge.Ref(pr.Sigil, pr.Number)
		}
	}
}

// owner is the account the repository lives under on its forge ("" when
// unknown): a branch "from" it is the repository's own, not a fork's.
func (rr *repoRun) owner() string {
	if !rr.linked {
		return ""
	}
	path := strings.TrimPrefix(rr.forge.Base, "https://")
	_, path, _ = strings.Cut(path, "/")
	owner, _, _ := strings.Cut(path, "/")
	return owner
}

// versions gives the repository's entries the release that first shipped
// each, the run's name for what no tag holds yet, and each section's
// previous tag, compare link and new contributors.
func (rr *repoRun) versions(ctx context.Context, opts Options, res *Output) error {
	hashes := make([]string, len(rr.entries))
	for i, e := range rr.entries {
		hashes[i] = e.Commit
	}
	rel := opts.Release
	versions, err := rr.repo.VersionsMatching(ctx, hashes, rel.Tags)
	if err != nil {
		return err
	}
	tags, err := rr.repo.Tags(ctx, rel.Tags)
	if err != nil {
		return err
	}
	previous := make(map[string]string, len(tags))
	for _, t := range tags {
		previous[t.Tag] = t.Previous
	}
	// The commits no tag holds: from the newest of them back to the last
	// release, named by --tag or --bump.
	var unreleased []*changelog.Entry
	for _, e := range rr.entries {
		if v, ok := versions[e.Commit]; ok {
			e.Version, e.VersionDate = v.Tag, v.Date
		} else {
			unreleased = append(unreleased, e)
		}
	}
	var last string
	var lastDate time.Time
	if len(unreleased) > 0 || rel.Bump != "" {
		from := "HEAD"
		if len(unreleased) > 0 {
			from = unreleased[0].Commit
		}
		t, ok, err := rr.repo.LastTag(ctx, from, rel.Tags)
		if err != nil {
			return err
		}
		if ok {
			last, lastDate = t.Tag, t.Date
		}
	}
	name := rel.Tag
	if rel.Bump != "" {
		changes := make([]bump.Change, len(unreleased))
		for i, e := range unreleased {
			changes[i] = bump.Change{Breaking: e.Breaking, Type: e.Type}
		}
		next, level := "", rel.Bump
		var err error
		if rel.Bump == BumpAuto {
			next, err = bump.Next(last, changes)
			level = bump.Applied(last, changes)
		} else {
			next, err = bump.Force(last, rel.Bump)
		}
		if err != nil {
			return fmt.Errorf("%s: --bump: %w", rr.repo.Path(), err)
		}
		res.Bumped = append(res.Bumped, Bumped{Repo: rr.repo.Name(), Last: last, Next: next, Level: level})
		if len(unreleased) > 0 {
			name = next
		}
	}
	if name != "" && len(unreleased) > 0 {
		if _, exists := previous[name]; exists {
			return fmt.Errorf("%s: the commits no tag holds yet cannot be named %s: a tag of that name releases other commits. Try: the next version's name, or --bump", rr.repo.Path(), name)
		}
		// The tag does not exist yet: the section is dated by its newest
		// commit, so that the same history gives the same notes, and
		// never before the last release, so that it stays on top.
		date := lastDate
		for _, e := range unreleased {
			date = latest(date, e.Date)
		}
		for _, e := range unreleased {
			e.Version, e.VersionDate = name, date
		}
		previous[name] = last
	} else if len(unreleased) > 0 {
		previous[""] = last
	}
	if rel.Skip != nil {
		// As git-cliff's: a skipped release is no one's previous one.
		for tag, prev := range previous {
			for seen := 0; prev != "" && rel.Skip(prev) && seen < len(previous); seen++ {
				prev = previous[prev]
			}
			previous[tag] = prev
		}
	}
	if rel.Skip != nil {
		kept := rr.entries[:0]
		for _, e := range rr.entries {
			if e.Version != "" && rel.Skip(e.Version) {
				res.hide(e)
				continue
			}
			kept = append(kept, e)
		}
		rr.entries = kept
	}
	var categories []string
	if cfg := rr.releaseConfig(opts.Log); cfg != nil {
		rr.sortIntoCategories(cfg, res, opts.Log)
		for _, c := range cfg.Categories {
			categories = append(categories, c.Title)
		}
	}
	return rr.describeSections(ctx, opts, res, previous, name, categories)
}

// firstVersion is the version of a repository's first release, as --bump
// names it: bump.First, or the level asked for counted from nothing.
func firstVersion(level string) (string, error) {
	if level == BumpAuto {
		return bump.Next("", nil)
	}
	return bump.Force("", level)
}

// latest is the later of two times.
func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// describeSections adds to the changelog what each of the repository's sections
// says of itself: its previous tag, the forge's page of its changes, and
// the authors whose first commit in the repository it holds.
func (rr *repoRun) describeSections(ctx context.Context, opts Options, res *Output, previous map[string]string, unreleasedName string, categories []string) error {
	var order []string
	byTag := map[string][]*changelog.Entry{}
	for _, e := range rr.entries {
		if _, ok := byTag[e.Version]; !ok {
			order = append(order, e.Version)
		}
		byTag[e.Version] = append(byTag[e.Version], e)
	}
	if len(order) == 0 {
		return nil
	}
	// Debuts are counted over the history the sections' newest commits
	// hold: a release's own, and everything before it.
	tips := make([]string, len(order))
	for i, tag := range order {
		tips[i] = byTag[tag][0].Commit
	}
	var debuts map[string]history.Debut
	if opts.Release.Contributors {
		var err error
		if debuts, err = rr.repo.Debuts(ctx, tips, opts.Release.Tags, rr.mailmap); err != nil {
			return err
		}
	}
	for _, tag := range order {
		entries := byTag[tag]
		info := changelog.VersionInfo{Repo: rr.repo.Name(), RepoID: rr.id, Tag: tag, PreviousTag: previous[tag], Categories: categories}
		if rr.linked {
			info.CompareURL = rr.compare(info.PreviousTag, tag)
		}
		// A debut in the commits no tag holds yet is one in the section
		// --tag or --bump names.
		debutTag := tag
		if tag == unreleasedName {
			debutTag = ""
		}
		seen := map[string]bool{}
		byCommit := map[string]*changelog.Entry{}
		for _, e := range entries {
			byCommit[e.Commit] = e
		}
		// Oldest first, as GitHub lists them.
		for _, e := range slices.Backward(entries) {
			k := history.AuthorKey(rr.mailmap, e.Author, e.AuthorEmail)
			d, ok := debuts[k]
			if seen[k] || !ok || d.Version != debutTag {
				continue
			}
			seen[k] = true
			p := changelog.Person{Name: e.Author, Email: e.AuthorEmail, Login: e.Login, Bot: e.Bot, FirstCommit: d.Commit}
			first := e
			if f, ok := byCommit[d.Commit]; ok {
				first = f
			}
			p.FirstPR, p.FirstPRURL = first.PR, first.PRURL
			if rr.linked {
				p.FirstURL = rr.forge.Commit(d.Commit)
			}
			info.NewContributors = append(info.NewContributors, p)
		}
		res.Changelog.Versions = append(res.Changelog.Versions, info)
	}
	return ctx.Err()
}

// compare is the forge's page of a section's changes: from the previous
// release to this one (to HEAD while it has no name), or a first
// release's history.
func (rr *repoRun) compare(prev, tag string) string {
	to := cmp.Or(tag, "HEAD")
	if prev == "" {
		return rr.forge.Commits(to)
	}
	return rr.forge.Compare(prev, to)
}

// openPeople reads what the repository says of its people and its forge.
func (rr *repoRun) openPeople() error {
	mm, err := rr.repo.Mailmap()
	if err != nil {
		return fmt.Errorf("%s: .mailmap: %w", rr.repo.Path(), err)
	}
	rr.mailmap = mm
	rr.forge, rr.linked = forge.Parse(rr.repo.RemoteURL("origin"))
	return nil
}

// releaseConfig reads the repository's .github/release.yml (or .yaml) at
// HEAD, as GitHub reads it for its generated notes: nil when there is
// none. One that cannot be read is warned of and left aside: the notes
// are written without its categories and exclusions.
func (rr *repoRun) releaseConfig(log *slog.Logger) *releaseyml.Config {
	for _, path := range releaseyml.Paths {
		data, ok, err := rr.repo.FileAt("HEAD", path, releaseyml.MaxSize)
		if err == nil && !ok {
			continue
		}
		var cfg *releaseyml.Config
		if err == nil {
			cfg, err = releaseyml.Parse(path, data)
		}
		if err != nil {
			log.Warn("the release notes leave aside the repository's release configuration. Try: fix it, as GitHub documents it under Automatically generated release notes", "repo", rr.repo.Path(), "error", err.Error())
			return nil
		}
		return cfg
	}
	return nil
}

// sortIntoCategories sorts the entries into the categories of the repository's
// release.yml, and leaves out those it excludes. Labels come from the
// forge's API alone: an entry whose labels were not asked for is left
// out only when its author is, and listed in no category (under Other
// Changes when others have one), never dropped for matching no category
// as GitHub's rules would drop it.
func (rr *repoRun) sortIntoCategories(cfg *releaseyml.Config, res *Output, log *slog.Logger) {
	kept := rr.entries[:0]
	unlabelled := 0
	for _, e := range rr.entries {
		if !rr.labelled[e.Commit] {
			if cfg.ExcludesAuthor(e.Login) {
				res.hide(e)
				continue
			}
			unlabelled++
			kept = append(kept, e)
			continue
		}
		category, excluded := cfg.Place(e.Labels, e.Login)
		if excluded {
			res.hide(e)
			continue
		}
		e.Category = category
		kept = append(kept, e)
	}
	rr.entries = kept
	if unlabelled > 0 && len(cfg.Categories) > 0 {
		log.Warn(fmt.Sprintf("%d changes are listed in no category of the release configuration (under %s beside others): it sorts by label, and only the forge's API tells labels. Try: GITHUB_TOKEN (or GITLAB_TOKEN) set, without --no-forge", unlabelled, changelog.OtherChanges), "repo", rr.repo.Path())
	}
}

// Tags makes a tag filter of the flags' patterns: tags matching pattern
// ("" for every tag) and not ignore ("" for none).
func Tags(pattern, ignore string) (func(string) bool, error) {
	var want, drop *regexp.Regexp
	var err error
	if pattern != "" {
		if want, err = regexp.Compile(pattern); err != nil {
			return nil, fmt.Errorf("--tag-pattern: %w", err)
		}
	}
	if ignore != "" {
		if drop, err = regexp.Compile(ignore); err != nil {
			return nil, fmt.Errorf("--ignore-tags: %w", err)
		}
	}
	if want == nil && drop == nil {
		return nil, nil
	}
	return func(tag string) bool {
		return (want == nil || want.MatchString(tag)) && (drop == nil || !drop.MatchString(tag))
	}, nil
}

// askForge fills in, from the forge's API, what the local history could
// not tell of the entries: a login, the pull request that merged the
// commit (its number, link and title) and its labels. Answers come from
// the store where an earlier run asked already. A lookup that fails is
// warned of: the notes are written with what the history tells.
func (rr *repoRun) askForge(ctx context.Context, opts Options, res *Output) error {
	if opts.Release.Forge == nil || !rr.linked || opts.DryRun {
		return nil
	}
	client, err := opts.Release.Forge(rr.forge)
	if err != nil || client == nil {
		return err
	}
	hashes := make([]string, len(rr.entries))
	for i, e := range rr.entries {
		hashes[i] = e.Commit
	}
	infos, err := client.Lookup(ctx, hashes)
	if rr.labelled == nil {
		rr.labelled = make(map[string]bool, len(infos))
	}
	stats := client.Stats()
	res.ForgeAsked += int(stats.Asked)
	res.ForgeCached += int(stats.Cached)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		opts.Log.Warn("the forge's API could not be asked about every commit; the notes name what the history tells of the rest", "repo", rr.repo.Path(), "error", err.Error())
	}
	for _, e := range rr.entries {
		info, ok := infos[e.Commit]
		if !ok || !info.Known {
			continue
		}
		if info.Login != "" {
			e.Login = info.Login
			e.Bot = e.Bot || strings.HasSuffix(info.Login, "[bot]")
		}
		e.Labels = info.Labels
		rr.labelled[e.Commit] = true
		if info.PR > 0 && e.PR == "" {
			e.PR, e.PRURL = strconv.Itoa(info.PR), info.PRURL
			if info.PRTitle != "" {
				e.Title = info.PRTitle
			}
		}
	}
	return nil
}
