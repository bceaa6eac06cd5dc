package cmd

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/digest-cli/digest/internal/cmdutil"
	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/store/sqlite"
)

// defaultKeep is how many runs of each dataset `runs prune` keeps when
// given no rule.
const defaultKeep = 100

// unfinishedGrace is how long a run not finished is kept whatever the
// rules: it may be a run still going (a batch run waits up to a day for
// its answers, a slow one at a low rate limit for days), whose next result
// would fail once its run is gone.
const unfinishedGrace = 7 * 24 * time.Hour

func newRunsPruneCmd(f *cmdutil.Factory) *cobra.Command {
	var (
		keep           int
		olderThan      string
		dryRun, vacuum bool
	)
	cmd := &cobra.Command{
		Use:   "prune",
		Short: "Remove old evaluation runs, keeping every cached answer",
		Long: fmt.Sprintf(`Remove the record of old digest eval runs: each run and its rows of results
(how each answer scored). Cached answers, the requests and responses they
keep, and summaries are never removed: a rerun still pays for nothing it
paid for before.

--keep N keeps the N newest runs of each dataset (as runs list names it);
--older-than D removes only runs started more than D ago (30d, 36h, 90m).
Given both, a run is removed only when both say so. Given neither, the
default is --keep %d. A run not finished (still going, or interrupted) is
kept until it is 7 days old, whatever the rules: another process may still
be writing it.

On SQLite the space freed stays in the file as free pages, which new results
fill before the file grows again; --vacuum rewrites the file without them.`, defaultKeep),
		Example: cmdutil.Example(
			"digest runs prune",
			"digest runs prune --keep 20 --dry-run",
			"digest runs prune --older-than 90d --vacuum"),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return cmdutil.UsageError("runs prune takes no run, got %q: it selects runs by --keep and --older-than. Try: digest runs prune --keep N --dry-run, to see what it would remove", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			keepSet, ageSet := cmd.Flags().Changed("keep"), cmd.Flags().Changed("older-than")
			if keep < 0 {
				return cmdutil.UsageError("--keep cannot be negative, got %d. Try: --keep 0 to keep no run for being recent, or --older-than D alone", keep)
			}
			var age time.Duration
			if ageSet {
				var err error
				if age, err = parseAge(olderThan); err != nil {
					return cmdutil.UsageError("--older-than %q: %v. Try: --older-than 30d, 36h or 90m", olderThan, err)
				}
			}
			if dryRun && vacuum {
				return cmdutil.UsageError("--vacuum rewrites the database, and --dry-run changes nothing. Try: one of them")
			}
			db, err := f.Database()
			if err != nil {
				return err
			}
			if vacuum && db.Server {
				return cmdutil.UsageError("--vacuum rewrites an SQLite file, and --db names a PostgreSQL server, whose autovacuum makes the rows removed reusable by itself. Try: without --vacuum")
			}
			if path := f.MissingDB(); path != "" {
				return cmdutil.UsageError("no database at %s, so no runs to prune. Try: --db with the file digest eval wrote to (default %s)", path, cmdutil.DefaultDB())
			}
			rules := store.RunPrune{Keep: -1, DryRun: dryRun}
			var said []string
			if keepSet || !ageSet {
				if !keepSet {
					keep = defaultKeep
				}
				rules.Keep = keep
				if keep > 0 {
					said = append(said, fmt.Sprintf("not among the %s newest of its dataset", commas(keep)))
				}
				if !keepSet {
					said[0] += " (the default: --keep N or --older-than D to choose)"
				}
			}
			now := time.Now()
			if ageSet {
				rules.Before = now.Add(-age)
				said = append(said, "started more than "+olderThan+" ago")
			}
			rules.UnfinishedBefore = now.Add(-unfinishedGrace)
			if len(said) == 0 {
				said = []string{"whatever its age"}
			}

			st, err := f.OpenExisting(ctx, !dryRun)
			if err != nil {
				return err
			}
			defer st.Close()
			pruned, err := st.PruneRuns(ctx, rules)
			for _, id := range pruned.IDs {
				fmt.Fprintln(f.IOStreams.Out, id)
			}
			if err != nil {
				if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
					return cmdutil.Interrupted(fmt.Sprintf("interrupted after removing %s (%s) from %s: run the same command again to remove the rest",
						counted(len(pruned.IDs), "run"), counted(pruned.Results, "result row"), st.Path()))
				}
				if len(pruned.IDs) > 0 {
					return fmt.Errorf("%w (%s removed before it)", err, counted(len(pruned.IDs), "run was", "runs were"))
				}
				return err
			}
			verb := "removed"
			if dryRun {
				verb = "would remove"
			}
			total := len(pruned.IDs) + pruned.Kept
			f.Infof("digest: %s %s of %s (%s) from %s: each run %s. Cached answers and summaries are kept.",
				verb, commas(len(pruned.IDs)), counted(total, "run"), counted(pruned.Results, "result row"), st.Path(), strings.Join(said, " and "))
			if pruned.Unfinished > 0 {
				f.Infof("digest: kept %s started in the last %d days: another process may still be writing %s", counted(pruned.Unfinished, "unfinished run"),
					unfinishedGrace/(24*time.Hour), map[bool]string{true: "it", false: "them"}[pruned.Unfinished == 1])
			}
			if db.Server || dryRun {
				return nil
			}
			return pruneSpace(f, cmd, db.Name, vacuum)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&keep, "keep", defaultKeep, "keep the N newest runs of each dataset")
	fl.StringVar(&olderThan, "older-than", "", "remove only runs started more than this long ago: 30d, 36h, 90m")
	fl.BoolVar(&dryRun, "dry-run", false, "list the runs that would be removed, and remove nothing")
	fl.BoolVar(&vacuum, "vacuum", false, "SQLite: then rewrite the file without its free pages, giving them back to the disk")
	cmdutil.DocumentEnv(fl)
	return cmd
}

// pruneSpace says how large the SQLite database at path is after a prune
// and how much of it is free, or, with vacuum, gives that back first.
func pruneSpace(f *cmdutil.Factory, cmd *cobra.Command, path string, vacuum bool) error {
	ctx := cmd.Context()
	size, free, err := sqlite.Space(ctx, path)
	if err != nil {
		return err
	}
	switch {
	case !vacuum && free == 0:
		f.Infof("digest: %s holds %s, with no free pages", path, megabytes(size))
		return nil
	case !vacuum:
		f.Infof("digest: %s holds %s, %s of it free pages that new results fill before the file grows; --vacuum gives them back to the disk", path, megabytes(size), megabytes(free))
		return nil
	}
	started := time.Now()
	if err := sqlite.Vacuum(ctx, path); err != nil {
		return err
	}
	after, _, err := sqlite.Space(ctx, path)
	if err != nil {
		return err
	}
	onDisk := ""
	if info, err := os.Stat(path); err == nil {
		onDisk = fmt.Sprintf(" (the file: %s)", megabytes(info.Size()))
	}
	f.Infof("digest: VACUUM took %s: %s holds %s%s, %s before", time.Since(started).Round(time.Millisecond), path, megabytes(after), onDisk, megabytes(size))
	return nil
}

var ageRE = regexp.MustCompile(`^(?:(\d+)d)?(.*)$`)

// parseAge reads an age as Go's durations write it, with days too: 30d,
// 1d12h, 36h, 90m.
func parseAge(s string) (time.Duration, error) {
	m := ageRE.FindStringSubmatch(strings.TrimSpace(s))
	var d time.Duration
	if m[1] != "" {
		days, err := strconv.Atoi(m[1])
		if err != nil || days > 100000 {
			return 0, fmt.Errorf("%s days is too long", m[1])
		}
		d = time.Duration(days) * 24 * time.Hour
	}
	if m[2] != "" || m[1] == "" {
		rest, err := time.ParseDuration(m[2])
		if err != nil {
			return 0, errors.New("not an age")
		}
		d += rest
	}
	if d < 0 {
		return 0, errors.New("cannot be negative")
	}
	return d, nil
}

// counted writes n things: "1 run", "2 runs", "1,000 runs"; or, given a
// plural of its own, "1 run was", "2 runs were".
func counted(n int, one string, many ...string) string {
	switch {
	case n == 1:
		return "1 " + one
	case len(many) > 0:
		return commas(n) + " " + many[0]
	}
	return commas(n) + " " + one + "s"
}

// commas writes n with thousands separators: 1,234,567.
func commas(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// megabytes writes a size in megabytes (10^6 bytes), to a tenth.
func megabytes(n int64) string {
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}
