package revision

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/digest-cli/digest/internal/approxidate"
)

// sha1HexDigits is a full SHA-1 hash's length in hex, the default.
const sha1HexDigits = 40

// name reads a revision without suffixes (git's get_oid_basic, then a
// describe name, then an abbreviated hash): a full hash, a reference with
// its reflog, upstream and push selectors, @ for HEAD.
func (r *resolver) name(name string) (string, error) {
	if len(name) == r.opts.HexDigits && isHex(name) {
		return strings.ToLower(name), nil
	}
	base, selector, hasSelector := splitReflog(name)
	if hasSelector && strings.HasPrefix(selector, "-") {
		if base != "" {
			return "", fmt.Errorf("@{%s} goes alone: it names a branch checked out before. Try: @{%s}", selector, selector)
		}
		hasSelector = false // @{-N} is a name, read below
	}
	var (
		hash, full string
		err        error
	)
	switch {
	case hasSelector && base == "":
		// @{N} is the current branch's log, or HEAD's when detached.
		_, full, _, err = r.src.Ref("HEAD")
		if err == nil && full == "" {
			full = "HEAD"
		}
	case hasSelector:
		full, err = r.dwimLog(base)
	default:
		hash, full, err = r.dwimRef(name)
		if errors.Is(err, errNoRef) {
			return r.abbreviated(name, err)
		}
	}
	if err != nil {
		return "", err
	}
	if !hasSelector {
		return hash, nil
	}
	return r.reflogAt(full, base, selector)
}

var errNoRef = errors.New("no such reference")

// splitReflog finds the last @{...} of a name that is not an upstream or
// push mark: the reflog selector.
func splitReflog(name string) (base, selector string, ok bool) {
	if !strings.HasSuffix(name, "}") {
		return name, "", false
	}
	at := strings.LastIndex(name, "@{")
	if at < 0 || isMark(name[at:]) {
		return name, "", false
	}
	return name[:at], name[at+2 : len(name)-1], true
}

// isMark reports whether s is @{upstream}, @{u} or @{push}, in any case.
func isMark(s string) bool {
	switch strings.ToLower(s) {
	case "@{u}", "@{upstream}", "@{push}":
		return true
	}
	return false
}

// dwimRef finds the reference a short name means, trying git's rules in
// git's order; the first that exists wins, with a warning when others do.
func (r *resolver) dwimRef(name string) (hash, full string, err error) {
	name, hash, err = r.interpretBranch(name)
	if err != nil || hash != "" {
		return hash, "", err
	}
	var found []string
	for _, candidate := range refCandidates(name) {
		h, target, ok, err := r.src.Ref(candidate)
		if err != nil {
			return "", "", err
		}
		if !ok {
			continue
		}
		if len(found) == 0 {
			hash, full = h, target
		}
		found = append(found, candidate)
	}
	if len(found) == 0 {
		return "", "", errNoRef
	}
	if len(found) > 1 {
		r.warn("refname '%s' is ambiguous (%s): %s is used", name, strings.Join(found, ", "), found[0])
	}
	return hash, full, nil
}

// dwimLog finds the reference whose log a name's @{...} reads.
func (r *resolver) dwimLog(name string) (string, error) {
	name, hash, err := r.interpretBranch(name)
	if err != nil {
		return "", err
	}
	if hash != "" {
		return "", fmt.Errorf("%s is a detached HEAD, which has no log of its own. Try: HEAD@{...}", name)
	}
	for _, candidate := range refCandidates(name) {
		if _, ok, err := r.src.Reflog(candidate); err != nil {
			return "", err
		} else if ok {
			_, target, _, err := r.src.Ref(candidate)
			if err != nil {
				return "", err
			}
			if candidate == "HEAD" || target == "" {
				target = candidate
			}
			return target, nil
		}
	}
	return "", fmt.Errorf("%s has no reflog here. Try: git reflog show %s, or a commit instead", name, name)
}

// refCandidates are the full names git tries for a short one, in order.
// The name as it stands is tried only where git reads a file of that name:
// HEAD-like names in capitals and names under refs/.
func refCandidates(name string) []string {
	if !validRefName(name) {
		return nil // git would not look it up: no file of such a name is a ref
	}
	var out []string
	if isPseudoRef(name) || strings.HasPrefix(name, "refs/") {
		out = append(out, name)
	}
	return append(out, "refs/"+name, "refs/tags/"+name, "refs/heads/"+name,
		"refs/remotes/"+name, "refs/remotes/"+name+"/HEAD")
}

// validRefName holds a name to git's check-ref-format rules, so that no
// lookup reads a file outside the reference storage (../../etc/passwd).
func validRefName(name string) bool {
	if name == "" || name == "@" || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") ||
		strings.HasSuffix(name, ".") || strings.Contains(name, "..") || strings.Contains(name, "//") ||
		strings.Contains(name, "@{") || strings.ContainsAny(name, " ~^:?*[\\\x7f") {
		return false
	}
	for _, part := range strings.Split(name, "/") {
		if strings.HasPrefix(part, ".") || strings.HasSuffix(part, ".lock") {
			return false
		}
	}
	for _, c := range name {
		if c < 0x20 {
			return false
		}
	}
	return true
}

func isPseudoRef(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		if !(c >= 'A' && c <= 'Z' || c == '_') {
			return false
		}
	}
	return true
}

// interpretBranch expands what git expands before looking a name up: @
// (HEAD), @{-N} (the Nth branch checked out before, or a commit when that
// was a detached HEAD), and BRANCH@{upstream} / BRANCH@{push}.
func (r *resolver) interpretBranch(name string) (expanded, hash string, err error) {
	if name == "@" {
		return "HEAD", "", nil
	}
	if rest, ok := strings.CutPrefix(name, "@{-"); ok && strings.HasSuffix(rest, "}") {
		n, err := smallNumber(strings.TrimSuffix(rest, "}"))
		if err != nil || n < 1 {
			return "", "", fmt.Errorf("@{-%s}: want a count of checkouts back, such as @{-1}", strings.TrimSuffix(rest, "}"))
		}
		return r.priorCheckout(n)
	}
	if !strings.HasSuffix(name, "}") {
		return name, "", nil
	}
	at := strings.LastIndex(name, "@{")
	if at < 0 || !isMark(name[at:]) {
		return name, "", nil
	}
	branch, err := r.branchOf(name[:at])
	if err != nil {
		return "", "", err
	}
	if strings.EqualFold(name[at:], "@{push}") {
		ref, err := r.pushOf(branch)
		return ref, "", err
	}
	ref, err := r.upstreamOf(branch)
	return ref, "", err
}

// branchOf names the branch a prefix of @{upstream} or @{push} means: the
// current one for "" or HEAD.
func (r *resolver) branchOf(prefix string) (string, error) {
	if prefix == "" || prefix == "HEAD" || prefix == "@" {
		_, target, _, err := r.src.Ref("HEAD")
		if err != nil {
			return "", err
		}
		branch, ok := strings.CutPrefix(target, "refs/heads/")
		if !ok {
			return "", errors.New("HEAD does not point to a branch, so it has no upstream or push branch. Try: BRANCH@{upstream}")
		}
		return branch, nil
	}
	expanded, hash, err := r.interpretBranch(prefix)
	if err != nil {
		return "", err
	}
	if hash != "" {
		return "", fmt.Errorf("%s was a detached HEAD, which has no upstream", prefix)
	}
	return strings.TrimPrefix(expanded, "refs/heads/"), nil
}

// priorCheckout reads HEAD's log for the nth "checkout: moving from X to Y".
func (r *resolver) priorCheckout(n int) (name, hash string, err error) {
	entries, _, err := r.src.Reflog("HEAD")
	if err != nil {
		return "", "", err
	}
	seen := 0
	for i := len(entries) - 1; i >= 0; i-- {
		rest, ok := strings.CutPrefix(entries[i].Message, "checkout: moving from ")
		if !ok {
			continue
		}
		from, _, ok := strings.Cut(rest, " to ")
		if !ok {
			continue
		}
		if seen++; seen == n {
			if len(from) == r.opts.HexDigits && isHex(from) {
				return from, strings.ToLower(from), nil
			}
			return from, "", nil
		}
	}
	return "", "", fmt.Errorf("@{-%d}: HEAD's reflog records %d checkout(s) of another branch. Try: git reflog, to see them", n, seen)
}

// upstreamOf is the remote-tracking branch a branch merges from
// (branch.NAME.remote and branch.NAME.merge, through the remote's fetch
// refspecs), as git's branch_get_upstream finds it.
func (r *resolver) upstreamOf(branch string) (string, error) {
	merge := r.last("branch." + branch + ".merge")
	remote := r.last("branch." + branch + ".remote")
	if merge == "" {
		return "", fmt.Errorf("no upstream is configured for branch %q. Try: git branch --set-upstream-to=REMOTE/BRANCH %s", branch, branch)
	}
	if remote == "." {
		return merge, nil
	}
	if remote == "" {
		remote = "origin"
	}
	tracking, ok := applyRefspecs(r.src.Config("remote."+remote+".fetch"), merge)
	if !ok {
		return "", fmt.Errorf("upstream branch %q of %q is not stored as a remote-tracking branch. Try: git fetch %s", merge, branch, remote)
	}
	return tracking, nil
}

// pushOf is the remote-tracking branch `git push` would update from the
// branch, as git's branch_get_push finds it.
func (r *resolver) pushOf(branch string) (string, error) {
	remote := r.last("branch." + branch + ".pushremote")
	if remote == "" {
		remote = r.last("remote.pushdefault")
	}
	if remote == "" {
		remote = r.last("branch." + branch + ".remote")
	}
	if remote == "" {
		remote = "origin"
	}
	if remote != "." && r.last("remote."+remote+".url") == "" {
		return "", fmt.Errorf("branch %q has no remote to push to (remote %q has no url). Try: git remote -v", branch, remote)
	}
	fetch := r.src.Config("remote." + remote + ".fetch")
	track := func(dst string) (string, error) {
		if remote == "." {
			return dst, nil
		}
		tracking, ok := applyRefspecs(fetch, dst)
		if !ok {
			return "", fmt.Errorf("push destination %q on remote %q has no local tracking branch. Try: git fetch %s", dst, remote, remote)
		}
		return tracking, nil
	}
	ref := "refs/heads/" + branch
	if push := r.src.Config("remote." + remote + ".push"); len(push) > 0 {
		dst, ok := applyRefspecs(push, ref)
		if !ok {
			return "", fmt.Errorf("the push refspecs of %q do not include %q", remote, branch)
		}
		return track(dst)
	}
	if r.last("remote."+remote+".mirror") == "true" {
		return track(ref)
	}
	switch mode := strings.ToLower(r.last("push.default")); mode {
	case "nothing":
		return "", errors.New("push has no destination (push.default is nothing)")
	case "matching", "current":
		return track(ref)
	case "upstream", "tracking":
		return r.upstreamOf(branch)
	case "", "simple":
		up, err := r.upstreamOf(branch)
		if err != nil {
			return "", err
		}
		cur, err := track(ref)
		if err != nil {
			return "", err
		}
		if cur != up {
			return "", fmt.Errorf("push.default simple cannot push %q to one destination: its upstream is %s. Try: %s@{upstream}", branch, up, branch)
		}
		return cur, nil
	default:
		return "", fmt.Errorf("push.default %q is not a mode git knows", mode)
	}
}

func (r *resolver) last(key string) string {
	values := r.src.Config(key)
	if len(values) == 0 {
		return ""
	}
	return values[len(values)-1]
}

// applyRefspecs maps a reference name through the first refspec whose
// source matches it ("+refs/heads/*:refs/remotes/origin/*"); negative
// refspecs (^...) only exclude.
func applyRefspecs(specs []string, ref string) (string, bool) {
	for _, spec := range specs {
		if strings.HasPrefix(spec, "^") {
			src := strings.TrimPrefix(spec, "^")
			if _, ok := matchRefspec(src, src, ref); ok {
				return "", false
			}
		}
	}
	for _, spec := range specs {
		if strings.HasPrefix(spec, "^") {
			continue
		}
		src, dst, ok := strings.Cut(strings.TrimPrefix(spec, "+"), ":")
		if !ok || dst == "" {
			continue
		}
		if out, ok := matchRefspec(src, dst, ref); ok {
			return out, true
		}
	}
	return "", false
}

func matchRefspec(src, dst, ref string) (string, bool) {
	star := strings.IndexByte(src, '*')
	if star < 0 {
		return dst, src == ref
	}
	prefix, suffix := src[:star], src[star+1:]
	if !strings.HasPrefix(ref, prefix) || !strings.HasSuffix(ref, suffix) || len(ref) < len(prefix)+len(suffix) {
		return "", false
	}
	return strings.Replace(dst, "*", ref[len(prefix):len(ref)-len(suffix)], 1), true
}

// reflogAt reads REF@{N} and REF@{DATE} as git's read_ref_at does.
func (r *resolver) reflogAt(full, shown, selector string) (string, error) {
	if shown == "" {
		shown = strings.TrimPrefix(full, "refs/heads/")
	}
	entries, ok, err := r.src.Reflog(full)
	if err != nil {
		return "", err
	}
	if !ok || len(entries) == 0 {
		return "", fmt.Errorf("%s has no reflog here. Try: git reflog show %s", shown, shown)
	}
	nth, err := smallNumber(selector)
	var at time.Time
	switch {
	case err == nil && nth >= 100000000:
		at, nth = time.Unix(int64(nth), 0), -1 // git reads a number this large as a time
	case err == nil:
	default:
		nth = -1
		t, form, err := approxidate.Parse(selector, r.opts.Now)
		if err != nil {
			return "", fmt.Errorf("@{%s}: %w", selector, err)
		}
		if form != approxidate.Exact {
			return "", fmt.Errorf("@{%s}: git reads a day alone as that day at the current time of day. Try: @{%s 00:00}, or a time", selector, strings.TrimSpace(t.Format(time.DateOnly)))
		}
		at = t
	}
	newest := len(entries) - 1
	if nth == 0 {
		return entries[newest].New, nil
	}
	if nth > 0 {
		if nth <= len(entries) {
			if e := entries[newest-nth+1]; !isZero(e.Old) {
				return e.Old, nil
			}
		}
		return "", fmt.Errorf("the reflog of %s has only %d entries. Try: git reflog show %s", shown, len(entries), shown)
	}
	for i := newest; i >= 0; i-- {
		if !entries[i].Time.After(at) {
			return entries[i].New, nil
		}
	}
	oldest := entries[0]
	r.warn("the reflog of %s only goes back to %s", shown, oldest.Time.Format(time.RFC1123Z))
	if isZero(oldest.Old) {
		return oldest.New, nil
	}
	return oldest.Old, nil
}

// abbreviated reads a describe name (v1.2-3-gabc1234) or an abbreviated
// hash of at least 4 digits; notFound is what to say when neither fits.
func (r *resolver) abbreviated(name string, notFound error) (string, error) {
	prefix, describe := name, false
	if m := describeName.FindStringSubmatch(name); m != nil {
		prefix, describe = m[1], true
	}
	if len(prefix) < 4 || len(prefix) > r.opts.HexDigits || !isHex(prefix) {
		return "", fmt.Errorf("unknown revision %q: no branch, tag or commit has that name here. Try: git branch -a, git tag, or a longer hash", name)
	}
	const shown = 8
	found, err := r.src.Abbrev(strings.ToLower(prefix), 64)
	if err != nil {
		return "", err
	}
	if len(found) == 1 {
		return found[0], nil
	}
	if len(found) == 0 {
		if describe {
			return "", fmt.Errorf("%s reads as a describe name, but no object begins with %s. Try: git describe", name, prefix)
		}
		return "", fmt.Errorf("unknown revision %q: no branch, tag or commit has that name here. Try: git branch -a, git tag, or a longer hash", name)
	}
	// Several objects: one commit (or tag of one) among them is what a
	// revision means, as git's hint for commit-ish arguments picks.
	var commits []string
	for _, h := range found {
		if c, err := r.peel(h, KindCommit, h); err == nil {
			if !slices.Contains(commits, c) {
				commits = append(commits, c)
			}
		}
	}
	if len(commits) == 1 {
		return commits[0], nil
	}
	list := found[:min(len(found), shown)]
	return "", fmt.Errorf("abbreviated hash %s is ambiguous: %d objects begin with it (%s). Try: more digits", prefix, len(found), strings.Join(list, ", "))
}

var describeName = regexp.MustCompile(`-g([0-9a-fA-F]+)$`)

// searchMessage finds the youngest commit reachable from starts whose
// message matches the pattern, as git's :/text and ^{/text} do: newest
// first by commit date; "!-" negates, "!!" stands for a literal "!".
func (r *resolver) searchMessage(pattern string, starts []string) (string, error) {
	negate := false
	if rest, ok := strings.CutPrefix(pattern, "!"); ok {
		switch {
		case strings.HasPrefix(rest, "-"):
			negate, pattern = true, rest[1:]
		case strings.HasPrefix(rest, "!"):
			pattern = rest
		default:
			return "", fmt.Errorf("/%s: git knows no modifier !%.1s. Try: /!-TEXT for commits not matching, /!!TEXT for a literal ! in front", pattern, rest)
		}
	}
	// POSIX regexec without REG_NEWLINE: . matches newlines, ^ and $ the
	// ends of the message.
	re, err := regexp.Compile("(?s)" + pattern)
	if err != nil {
		return "", fmt.Errorf("/%s: %v. Try: a Go regular expression (RE2)", pattern, err)
	}
	q := &byDate{}
	seen := map[string]bool{}
	for _, h := range starts {
		c, err := r.peel(h, "", h)
		if err != nil {
			continue
		}
		if kind, _, err := r.src.Object(c); err != nil || kind != KindCommit {
			continue
		}
		if !seen[c] {
			seen[c] = true
			if err := q.push(r.src, c); err != nil {
				return "", err
			}
		}
	}
	for q.Len() > 0 {
		it := q.pop()
		if re.MatchString(it.commit.Message) != negate {
			return it.hash, nil
		}
		for _, p := range it.commit.Parents {
			if seen[p] {
				continue
			}
			seen[p] = true
			if err := q.push(r.src, p); err != nil && !errors.Is(err, ErrMissing) {
				return "", err
			}
		}
	}
	return "", fmt.Errorf("no commit's message matches %q. Try: git log --grep, to check the text", pattern)
}

func isHex(s string) bool {
	for _, c := range []byte(s) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func isZero(h string) bool { return strings.Trim(h, "0") == "" }
