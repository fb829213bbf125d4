// Command train is troupe's CLI: RL training of multi-agent LLM systems from
// a YAML config, and the tools around it.
package main

import (
	"fmt"
	"os"

	"troupe/torch"
)

var version = "dev"

func main() {
	fmt.Printf("troupe %s (libtorch %s)\n", version, torch.VersionString())
	os.Exit(0)
}
