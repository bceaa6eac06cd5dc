// Command digest summarizes git history with LLMs, paying for each
// commit's summary once.
package main

import (
	"os"

	"github.com/digest-cli/digest/cmd"
)

func main() {
	os.Exit(cmd.Main())
}
