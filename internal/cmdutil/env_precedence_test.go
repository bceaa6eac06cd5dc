package cmdutil

import (
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestFlagBeatsEnvBeatsDefault: ApplyEnv, which digest's root command
// runs before every command, gives a flag its DIGEST_* variable's value
// unless the command line set it, a flag of the parent (--db) as well as
// the command's own; a value the flag cannot take is a usage error naming
// the variable. (cmd.TestErrorsAndExitCodes's "bad env value" and
// cmd.TestHighlightsSayWhatWasAsked's DIGEST_HIGHLIGHTS check digest runs it.)
func TestFlagBeatsEnvBeatsDefault(t *testing.T) {
	run := func(env map[string]string, args ...string) (db string, n int, format string, err error) {
		root := &cobra.Command{Use: "digest", SilenceErrors: true, SilenceUsage: true,
			PersistentPreRunE: func(c *cobra.Command, _ []string) error { return ApplyEnv(c, func(k string) string { return env[k] }) }}
		root.PersistentFlags().StringVar(&db, "db", "default.db", "")
		sub := &cobra.Command{Use: "summarize", RunE: func(*cobra.Command, []string) error { return nil }}
		sub.Flags().IntVar(&n, "max-commits", 0, "")
		sub.Flags().StringVar(&format, "format", "markdown", "")
		root.AddCommand(sub)
		root.SetArgs(append([]string{"summarize"}, args...))
		err = root.Execute()
		return
	}
	env := map[string]string{"DIGEST_MAX_COMMITS": "2", "DIGEST_FORMAT": "jsonl", "DIGEST_DB": "env.db"}
	for _, tt := range []struct {
		env    map[string]string
		args   []string
		db     string
		n      int
		format string
	}{
		{nil, nil, "default.db", 0, "markdown"},
		{env, nil, "env.db", 2, "jsonl"},
		{env, []string{"--max-commits", "1", "--db", "flag.db"}, "flag.db", 1, "jsonl"},
	} {
		db, n, format, err := run(tt.env, tt.args...)
		if err != nil || db != tt.db || n != tt.n || format != tt.format {
			t.Errorf("%v with %v: --db %q, --max-commits %d, --format %q, %v; want %q, %d, %q", tt.args, tt.env, db, n, format, err, tt.db, tt.n, tt.format)
		}
	}
	_, _, _, err := run(map[string]string{"DIGEST_MAX_COMMITS": "many"})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != ExitUsage || !strings.Contains(err.Error(), `DIGEST_MAX_COMMITS="many"`) || !strings.Contains(err.Error(), "Try: ") {
		t.Errorf("a value --max-commits cannot take: %v, want a usage error naming DIGEST_MAX_COMMITS", err)
	}
}
