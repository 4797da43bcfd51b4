package iotbench.contract;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * GET /fanout's work (docs/contract.md, "The fan-out executor"), seed 002's endpoint: ten 50 ms sub-tasks on
 * one fixed pool of {@code FANOUT_POOL} platform threads (10), the process's only one, shared by every request.
 * Under load the pool's size, not the request's thread model, sets the throughput (10 workers / 10 sub-tasks /
 * 50 ms = 20 requests/s), which is what the seed measured. Each app makes one at startup and waits for
 * {@link #start()} its own way: a request thread joins, WebFlux and Ktor suspend.
 */
public final class FanOut {
    public static final int TASKS = 10;
    public static final long TASK_MS = 50;
    public static final int DEFAULT_WORKERS = 10;

    private final ExecutorService executor;
    private final int workers;

    public FanOut(int workers) {
        this.workers = workers;
        this.executor = Executors.newFixedThreadPool(workers, new Named());
    }

    /** The pool this process's environment asks for; a malformed FANOUT_POOL fails startup with what to fix. */
    public static FanOut fromEnv() {
        return new FanOut(workers(System.getenv()));
    }

    static int workers(Map<String, String> env) {
        String value = env.get("FANOUT_POOL");
        if (value == null || value.isEmpty()) {
            return DEFAULT_WORKERS;
        }
        int n;
        try {
            n = Integer.parseInt(value);
        } catch (NumberFormatException e) {
            n = 0;
        }
        if (n < 1 || n > 1000) {
            throw new IllegalArgumentException("FANOUT_POOL=" + value + ": give the fan-out pool's size, 1 to 1000");
        }
        return n;
    }

    /** The pool's threads, for an app that dispatches the sub-tasks itself (Ktor: asCoroutineDispatcher). */
    public ExecutorService executor() {
        return executor;
    }

    public int workers() {
        return workers;
    }

    /** Submits the ten sub-tasks; the future completes, with the answer, once all of them have (allOf). */
    public CompletableFuture<Answers.FannedOut> start() {
        CompletableFuture<?>[] tasks = new CompletableFuture<?>[TASKS];
        for (int i = 0; i < TASKS; i++) {
            tasks[i] = CompletableFuture.runAsync(FanOut::subTask, executor);
        }
        return CompletableFuture.allOf(tasks).thenApply(done -> Answers.FannedOut.DONE);
    }

    /** The fan-out on the caller's thread, which waits for it: the thread-per-request apps. */
    public Answers.FannedOut run() {
        return start().join();
    }

    /** One sub-task: a 50 ms blocking wait, holding its pool thread as the seed's did. */
    public static void subTask() {
        try {
            Thread.sleep(TASK_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("fan-out sub-task interrupted", e);
        }
    }

    /** fanout-1, fanout-2, ...: daemon threads, so that the pool never holds the JVM at exit. */
    private static final class Named implements ThreadFactory {
        private final AtomicInteger next = new AtomicInteger(1);

        @Override
        public Thread newThread(Runnable r) {
            Thread t = new Thread(r, "fanout-" + next.getAndIncrement());
            t.setDaemon(true);
            return t;
        }
    }
}
