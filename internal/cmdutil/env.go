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
			return
		}
		if f.Annotations == nil {
			f.Annotations = map[string][]string{}
		}
		f.Annotations[envAnnotation] = []string{EnvName(f.Name)}
	})
	return err
}

// envAnnotation marks a flag whose value came from its variable.
const envAnnotation = "digest_env"

// NameEnv adds to the message of an error about a flag that its value came
// from the environment: checked after parsing, such a value is refused as
// the flag's ("--format: unknown format"), and a person looking for the
// flag on the command line would not find it.
func NameEnv(cmd *cobra.Command, err error) error {
	if cmd == nil || err == nil {
		return err
	}
	msg := err.Error()
	var from []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		env := f.Annotations[envAnnotation]
		if len(env) == 0 {
			return
		}
		flag := "--" + f.Name
		for i := strings.Index(msg, flag); i >= 0; {
			end := i + len(flag)
			if end == len(msg) || !isFlagChar(msg[end]) {
				from = append(from, fmt.Sprintf("%s was set by %s", flag, env[0]))
				break
			}
			j := strings.Index(msg[end:], flag)
			if j < 0 {
				break
			}
			i = end + j
		}
	})
	if len(from) == 0 {
		return err
	}
	return &envError{err: err, note: " (" + strings.Join(from, ", ") + ")"}
}

func isFlagChar(c byte) bool {
	return c == '-' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
}

// envError is an error with a note of where its flags' values came from;
// it unwraps to the error, whose exit code it keeps.
type envError struct {
	err  error
	note string
}

func (e *envError) Error() string { return e.err.Error() + e.note }
func (e *envError) Unwrap() error { return e.err }
