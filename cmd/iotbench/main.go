// Command iotbench benchmarks server runtimes in pinned containers with honest, open-loop load.
// See the README and `iotbench --help`.
package main

import (
	"context"
	"os"

	"github.com/iotbench/iotbench/internal/cli"
)

func main() {
	// Ctrl-C, SIGTERM and SIGHUP cancel the run; every started container is still removed before
	// exit. A second one exits at once (cli.WithInterrupts).
	ctx, stop := cli.WithInterrupts(context.Background(), os.Stderr)
	code := cli.Main(ctx, os.Args[1:], cli.DefaultStreams())
	stop()
	os.Exit(code)
}
