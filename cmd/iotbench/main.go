// Command iotbench benchmarks server runtimes in pinned containers with honest, open-loop load.
// See the README and `iotbench --help`.
package main

import (
	"context"
	"os"

	"github.com/iotbench/iotbench/internal/cli"
)

func main() {
	// Ctrl-C, SIGTERM, SIGHUP and a standard stream's reader gone cancel the run; every started
	// container is still removed before exit. A second signal exits at once (cli.WithInterrupts).
	ctx, streams, stop := cli.WithInterrupts(context.Background(), cli.DefaultStreams())
	code := cli.Main(ctx, os.Args[1:], streams)
	stop()
	os.Exit(code)
}
