package shard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"
)

// ErrLeftRunning is InProcess's Wait's error when the shard did not end after its run did.
var ErrLeftRunning = errors.New("the shard did not end")

// inProcessGrace is how long Wait gives an in-process shard to end once its streams have.
const inProcessGrace = 10 * time.Second

// InProcess starts a shard as a goroutine of this process over pipes, as the binary's shard
// would run, for the tests of the protocol and of the starters. When ctx ends, the shard's
// streams end as a killed process's or a removed container's do, so that a shard blocked on them
// ends as it would there. A shard that has still not ended inProcessGrace after Wait was called
// is left running: Wait returns ErrLeftRunning with the goroutines stuck in the shard's code
// (a real shard would have been killed, and the test would otherwise hang).
func InProcess(ctx context.Context, i int) (Process, error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := Serve(ctx, inR, outW)
		outW.Close()
		inR.Close()
		done <- err
	}()
	context.AfterFunc(ctx, func() {
		inR.CloseWithError(ctx.Err())
		outW.CloseWithError(ctx.Err())
	})
	wait := func() error {
		select {
		case err := <-done:
			return err
		case <-time.After(inProcessGrace):
			return fmt.Errorf("shard %d: %w within %v of its run's end, stuck in:\n%s", i+1, ErrLeftRunning, inProcessGrace, stuckIn("iotbench/internal/shard.Serve"))
		}
	}
	return Process{In: inW, Out: outR, Wait: wait}, nil
}

// stuckIn is the stacks of this process's goroutines that have fn among their calls.
func stuckIn(fn string) string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out bytes.Buffer
	for g := range bytes.SplitSeq(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte(fn)) {
			out.Write(g)
			out.WriteString("\n\n")
		}
	}
	return out.String()
}
