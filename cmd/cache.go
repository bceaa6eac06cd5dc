package cmd

import (
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/digest-cli/digest/internal/cmdutil"
	"github.com/digest-cli/digest/internal/store/sqlite"
)

// NewCacheCmd builds `digest cache`: the database itself, rather than what
// it holds.
func NewCacheCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "cache",
		Short:   "Check the cache database",
		Long:    "Look after the database digest keeps its results in (--db).",
		Example: cmdutil.Example("digest cache check", "digest cache check --db ci-cache.db"),
	}
	check := &cobra.Command{
		Use:   "check",
		Short: "Read every page of an SQLite cache and say what is damaged",
		Long: `Read the whole SQLite database --db names, every page, index and constraint
(SQLite's integrity_check), and say what is damaged, writing nothing.

Opening a database reads its header and its schema, the same few pages
whatever its size; every page is read only when the last process to have
it open did not close it (it was killed, or the machine stopped). Damage
done to a database closed cleanly (a failing disk, another program writing
to it) is found by this check, or by the first command that reads the
damaged page. It takes about 2.3 ms per MB of database in the page cache
(2.5 s for 1.1 GB), longer when the file must be read from the disk.`,
		Example: cmdutil.Example("digest cache check", "digest cache check --db ci-cache.db || cp backup/digest.db ci-cache.db"),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return cmdutil.UsageError("cache check takes no argument, got %q. Try: digest cache check --db %s", args[0], args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			db, err := f.Database()
			if err != nil {
				return err
			}
			if db.Server {
				return cmdutil.UsageError("--db names a PostgreSQL server, which checks its own pages; digest cache check reads SQLite files. Try: pg_amcheck on the server, or --db with an SQLite file")
			}
			if path := f.MissingDB(); path != "" {
				return cmdutil.UsageError("no database at %s, so nothing to check. Try: --db with the file digest summarize or digest eval wrote to (default %s)", path, cmdutil.DefaultDB())
			}
			started := time.Now()
			if err := sqlite.Check(cmd.Context(), db.Name); err != nil {
				return err
			}
			size := ""
			if info, err := os.Stat(db.Name); err == nil {
				size = megabytes(info.Size()) + ", "
			}
			f.Infof("digest: %s passed SQLite's integrity check (%sread in %s)", db.Name, size, time.Since(started).Round(time.Millisecond))
			return nil
		},
	}
	cmdutil.DocumentEnv(check.Flags())
	cmd.AddCommand(check)
	return cmd
}
