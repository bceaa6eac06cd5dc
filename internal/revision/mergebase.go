package revision

import (
	"container/heap"
	"errors"
	"slices"
)

// mergeBases returns the best common ancestors of a and b, all of them, as
// `git merge-base --all` finds them: the commits both reach that no other
// common ancestor reaches, which A...B leaves out.
func mergeBases(src Source, a, b string) ([]string, error) {
	if a == b {
		return []string{a}, nil
	}
	const (
		fromA = 1 << iota
		fromB
		stale // reached from a common ancestor: not a best one
		found
	)
	flags := map[string]int{a: fromA, b: fromB}
	q := &byDate{}
	for _, h := range []string{a, b} {
		if err := q.push(src, h); err != nil {
			return nil, err
		}
	}
	var candidates []string
	nonStale := func() bool {
		for _, it := range q.items {
			if flags[it.hash]&stale == 0 {
				return true
			}
		}
		return false
	}
	for q.Len() > 0 && nonStale() {
		it := q.pop()
		f := flags[it.hash] & (fromA | fromB | stale)
		if f == fromA|fromB {
			if flags[it.hash]&found == 0 {
				flags[it.hash] |= found
				candidates = append(candidates, it.hash)
			}
			f |= stale
		}
		for _, p := range it.commit.Parents {
			if flags[p]&f == f {
				continue
			}
			flags[p] |= f
			if err := q.push(src, p); err != nil && !errors.Is(err, ErrMissing) {
				return nil, err
			}
		}
	}
	var bases []string
	for _, c := range candidates {
		if flags[c]&stale == 0 || len(candidates) == 1 {
			bases = append(bases, c)
		}
	}
	if len(bases) < 2 {
		return bases, nil
	}
	return removeRedundant(src, bases)
}

// removeRedundant drops the candidates another candidate reaches. Only
// criss-cross histories have several, so a whole walk per candidate is
// affordable.
func removeRedundant(src Source, candidates []string) ([]string, error) {
	var out []string
	for i, c := range candidates {
		others := slices.Delete(slices.Clone(candidates), i, i+1)
		reached, err := reaches(src, others, c)
		if err != nil {
			return nil, err
		}
		if !reached {
			out = append(out, c)
		}
	}
	return out, nil
}

// reaches reports whether target is an ancestor of any of starts.
func reaches(src Source, starts []string, target string) (bool, error) {
	seen := map[string]bool{}
	stack := slices.Clone(starts)
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[h] {
			continue
		}
		seen[h] = true
		c, err := src.Commit(h)
		if errors.Is(err, ErrMissing) {
			continue
		}
		if err != nil {
			return false, err
		}
		for _, p := range c.Parents {
			if p == target {
				return true, nil
			}
			stack = append(stack, p)
		}
	}
	return false, nil
}

// byDate is a queue of commits, newest first by commit date, in the order
// they came among equal dates (git's commit_list_insert_by_date).
type byDate struct {
	items []queued
	added int
}

type queued struct {
	hash   string
	commit Commit
	order  int
}

func (q *byDate) push(src Source, h string) error {
	c, err := src.Commit(h)
	if err != nil {
		return err
	}
	q.added++
	heap.Push(q, queued{hash: h, commit: c, order: q.added})
	return nil
}

func (q *byDate) pop() queued { return heap.Pop(q).(queued) }

func (q *byDate) Len() int { return len(q.items) }
func (q *byDate) Less(i, j int) bool {
	a, b := q.items[i], q.items[j]
	if a.commit.Time.Equal(b.commit.Time) {
		return a.order < b.order
	}
	return a.commit.Time.After(b.commit.Time)
}
func (q *byDate) Swap(i, j int) { q.items[i], q.items[j] = q.items[j], q.items[i] }
func (q *byDate) Push(x any)    { q.items = append(q.items, x.(queued)) }
func (q *byDate) Pop() any {
	it := q.items[len(q.items)-1]
	q.items = q.items[:len(q.items)-1]
	return it
}
