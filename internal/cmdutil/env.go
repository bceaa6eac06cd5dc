package cmdutil

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// EnvPrefix prefixes the environment variable of every flag.
const EnvPrefix = "DIGEST_"

// EnvName is the variable that sets a flag: --max-commits → DIGEST_MAX_COMMITS.
func EnvName(flag string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// noEnv are flags an environment variable must never set.
var noEnv = map[string]bool{"help": true}

// DocumentEnv adds each flag's variable to its help text, so --help shows
// where a value can come from.
func DocumentEnv(fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		if !noEnv[f.Name] && !strings.Contains(f.Usage, "$"+EnvPrefix) {
			f.Usage += fmt.Sprintf(" [$%s]", EnvName(f.Name))
		}
	})
}

// ApplyEnv gives each flag not set on the command line the value of its
// DIGEST_* variable: flag > environment > default.
func ApplyEnv(cmd *cobra.Command, getenv func(string) string) error {
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed || noEnv[f.Name] {
			return
		}
		v := getenv(EnvName(f.Name))
		if v == "" {
			return
		}
		if setErr := cmd.Flags().Set(f.Name, v); setErr != nil {
			err = UsageError("%s=%q: %v. Try: a value --%s accepts, or unset %s", EnvName(f.Name), v, setErr, f.Name, EnvName(f.Name))
		}
	})
	return err
}
