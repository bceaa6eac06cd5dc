// Command digest summarizes git history with LLMs, paying for each
// commit's summary once.
package main

import (
	"os"

	"github.com/digest-cli/digest/cmd"
	"github.com/digest-cli/digest/internal/memlimit"
)

func main() {
	// Before anything is opened: caches are sized by the limit.
	stop := memlimit.Apply(os.Getenv)
	code := cmd.Main()
	stop()
	os.Exit(code)
}
