// Command iotbench benchmarks server runtimes in pinned containers with honest, open-loop load.
// See the README and `iotbench --help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/iotbench/iotbench/internal/cli"
)

func main() {
	// Ctrl-C cancels the run; every started container is still removed before exit.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.DefaultStreams())
	stop()
	os.Exit(code)
}
