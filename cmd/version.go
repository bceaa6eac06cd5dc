package cmd

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/digest-cli/digest/internal/cmdutil"
)

// Set at build time by -ldflags "-X github.com/digest-cli/digest/cmd.version=v1.2.3 ..."
// (see .goreleaser.yaml).
var (
	version = "dev"
	commit  = ""
	date    = ""
)

func versionString() string {
	v := version
	// `go install ...@v1.2.3` records the module version instead of ldflags.
	if v == "dev" {
		if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
	}
	if commit != "" {
		v += " (" + commit
		if date != "" {
			v += ", " + date
		}
		v += ")"
	}
	return v
}

// NewVersionCmd prints the version.
func NewVersionCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print digest's version",
		Long:    "Print the version digest was built as, and the Go toolchain and platform.",
		Example: cmdutil.Example("digest version"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprintf(f.IOStreams.Out, "digest %s %s %s/%s\n", f.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}
