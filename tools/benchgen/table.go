package main

import (
	"fmt"
	"io"
	"time"

	"github.com/iotbench/iotbench/internal/resources"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// printTable writes one line per step. "added" is a latency minus wrk's with one connection (the
// floor: nginx and the kernel with nothing queued), ×wrk the throughput over wrk's at the same
// number of connections, or over wrk's closed-loop throughput for open-loop steps.
func printTable(w io.Writer, rows []row) {
	var floor, wrk, wrkTLS, h2load row
	for _, r := range rows {
		switch {
		case r.isFloor:
			floor = r
		case r.isWrkReference && r.h2:
			h2load = r
		case r.isWrkReference && r.tls:
			wrkTLS = r
		case r.isWrkReference:
			wrk = r
		}
	}
	header := []any{"client", "load", "rps", "achieved", "client CPU", "CPU/request", "server CPU", "other CPU", "p50", "p99", "p99.9", "p50 added", "p99 added", "own p99", "send lag p99", "sched wait p99", "GCs", "heap/request", "×wrk", "valid"}
	align := make([]tw.Align, len(header))
	for i := range align {
		align[i] = tw.AlignRight
	}
	align[0], align[1], align[len(align)-1] = tw.AlignLeft, tw.AlignLeft, tw.AlignLeft
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderConfig(tw.CellConfig{
			Formatting: tw.CellFormatting{AutoFormat: tw.Off},
			Padding:    tw.CellPadding{Global: tw.PaddingDefault},
		}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
	)
	t.Header(header...)
	var notes []string
	for _, r := range rows {
		achieved, lag := "—", "—"
		if r.isOpen {
			achieved = fmt.Sprintf("%.2f%%", 100*r.achieved)
		}
		if r.isOpen && (r.isEngine || r.isProduct) {
			lag = micros(r.lagP99)
		}
		added50, added99 := "floor", "floor"
		switch {
		case r.inFlight:
			added50, added99 = "—", "—" // another server than the floor's
		case !r.isFloor && floor.p50 > 0:
			added50, added99 = signedMicros(r.p50-floor.p50), signedMicros(r.p99-floor.p99)
		}
		own, heap, sched, gcs := "—", "—", "—", "—"
		if r.isEngine {
			heap = fmt.Sprintf("%.1f KB", r.allocated/1000)
			own, sched, gcs = micros(r.ownP99), micros(r.schedP99), fmt.Sprint(r.gcs)
		}
		if r.isProduct {
			own = micros(r.ownP99)
		}
		ratio, ref := "—", wrk
		switch {
		case r.h2:
			ref = h2load
		case r.tls:
			ref = wrkTLS
		}
		if (r.isEngine || r.isProduct) && !r.inFlight && ref.rps > 0 {
			ratio = fmt.Sprintf("%.2f", r.rps/ref.rps)
		}
		p999 := "—" // wrk prints none
		if r.p999 > 0 {
			p999 = micros(r.p999)
		}
		others := "—"
		if r.othersKnown {
			others = fmt.Sprintf("%.2f", r.others)
		}
		valid := r.valid
		if len(valid) > 3 {
			notes = append(notes, fmt.Sprintf("%s %s: %s", r.client, r.load, valid))
			label := "no"
			if r.repeated {
				label = "repeated"
			}
			valid = fmt.Sprintf("%s (%d)", label, len(notes))
		}
		p50, p99 := micros(r.p50), micros(r.p99)
		if r.client == "h2load" { // it prints no percentiles
			p50, p99, added50, added99 = "—", "—", "—", "—"
		}
		_ = t.Append(r.client, r.load, fmt.Sprintf("%.0f", r.rps), achieved,
			fmt.Sprintf("%.0f%%", 100*r.clientCPU), perRequest(r.clientCPU, r.rps), fmt.Sprintf("%.0f%%", 100*r.serverCPU), others,
			p50, p99, p999, added50, added99, own, lag, sched, gcs, heap, ratio, valid)
	}
	_ = t.Render()
	for i, n := range notes {
		fmt.Fprintf(w, "  (%d) %s\n", i+1, n)
	}
	for _, r := range rows {
		if r.isHalf {
			fmt.Fprintf(w, "  at half the capacity (%d rps) the engine's own delay is %s at the p99 (goal: under 1 ms)", r.requested, micros(r.ownP99))
			if floor.p99 > 0 {
				fmt.Fprintf(w, "; the p99 is %s over wrk -c1's", signedMicros(r.p99-floor.p99))
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintf(w, "  added: over wrk with 1 connection (nothing queued, so the server's own stalls count once, not for every request queued behind them);\n  own p99: what the engine itself added to each request, measured per request (due until written, answer received by the kernel until read);\n  CPU: share of one core over the measured phase, and per request;\n  other CPU: what other processes and the hypervisor (steal) took of the client's and nginx's CPUs, in cores; a failed open-loop step is run again once, up to %d times while more than %.2f was taken; open loop: latency from each request's due time;\n  sched wait p99: how long the engine's goroutines waited, runnable, for its thread (latency it adds whatever the server does); GCs: collections in the step;\n  heap/request: what the engine allocated per request (collected only near 1 GiB, as in iotbench run);\n  iotbench run: the whole `iotbench run --url` process at the rate, pinned as the engine is (-iotbench): its results row's figures over its measured phase\n", maxAttempts, resources.Disturbed)
}

// perRequest is the client's CPU time per request: what bounds its throughput on one core.
func perRequest(cores, rps float64) string {
	if rps <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f µs", 1e6*cores/rps)
}

// micros writes a latency to the microsecond below 10 ms, where the figures of this table live.
func micros(d time.Duration) string {
	switch {
	case d < time.Millisecond && d > -time.Millisecond:
		return fmt.Sprintf("%d µs", d.Microseconds())
	case d < 10*time.Millisecond && d > -10*time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.1f ms", float64(d)/1e6)
}

func signedMicros(d time.Duration) string {
	if d >= 0 {
		return "+" + micros(d)
	}
	return micros(d)
}
