package iotbench.contract;

import java.util.concurrent.CompletableFuture;

/** The contract's JSON answers (docs/contract.md, "Endpoints"), as the Java apps write them with Jackson. */
public final class Answers {
    private Answers() {
    }

    public record Ingested(long id, double processingMs) {
    }

    public record Fast(long id) {
    }

    public record Realistic(long id, double processingMs, double mean, double min, double max, double stddev,
                            double pi) {
        /** {@code startNanos}: System.nanoTime() when the handler started. */
        public static Realistic of(long id, long startNanos, Enrichment e) {
            return new Realistic(id, elapsedMs(startNanos), e.mean(), e.min(), e.max(), e.stddev(), e.pi());
        }
    }

    public record Cpu(double pi, long trace, int primes) {
        /**
         * GET /cpu's work: its three tasks in parallel, the first two on the common fork-join pool, as the
         * published app's "parallel tasks" ran (seed 001): one request uses every CPU the JVM has.
         */
        public static Cpu compute() {
            CompletableFuture<Double> pi = CompletableFuture.supplyAsync(() -> Work.monteCarloPi(1_000_000));
            CompletableFuture<Double> trace = CompletableFuture.supplyAsync(Work::matrixTrace);
            int primes = Work.countPrimes(100_000);
            return new Cpu(pi.join(), (long) (double) trace.join(), primes);
        }
    }

    public record Waited(long waitedMs) {
    }

    public record Fib(int n, long result) {
    }

    public record Ok(boolean ok) {
    }

    public record Stats(long rows) {
    }

    /** GET /fanout's answer: the sub-tasks run and the blocking they stood for, 10 x 50 ms. */
    public record FannedOut(int tasks, long waitedMs) {
        public static final FannedOut DONE = new FannedOut(FanOut.TASKS, FanOut.TASKS * FanOut.TASK_MS);
    }

    public record EnterpriseDone(long id, int rows, int bytes, boolean downstream, boolean cacheHit) {
    }

    /** Milliseconds since {@code startNanos} (System.nanoTime()): the answers' processingMs. */
    public static double elapsedMs(long startNanos) {
        return (System.nanoTime() - startNanos) / 1_000_000.0;
    }
}
