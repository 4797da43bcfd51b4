package iotbench.contract;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.PlatformManagedObject;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Method;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import javax.management.ListenerNotFoundException;
import javax.management.Notification;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;

import com.sun.management.GarbageCollectionNotificationInfo;
import com.sun.management.OperatingSystemMXBean;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;

/**
 * GET /signals (docs/contract.md, "Signals"): how the runtime is doing, on {@code $BIND_ADDRESS:$SIGNALS_PORT},
 * from a JDK {@link HttpServer} whose one dispatcher thread ({@code iotbench-signals}, a daemon) also answers
 * (the JDK server adds its sleeping {@code idle-timeout-task} timer thread), never through the framework that
 * serves the load. Unset SIGNALS_PORT: no port, no thread, no GC listener.
 *
 * <p>Every figure is a counter the JVM keeps anyway, read through the platform's management API, except the
 * safepoints (HotSpot's jvmstat counters: {@link PerfData}) and the JIT (/proc: {@link RuntimeInfo}); gathering
 * them costs a few tens of microseconds of CPU, most of it the JIT compiler threads' /proc files, and the JDK
 * server's handling of the request (parsing, headers, the selector) several times that.
 * Each app registers the pools only it can see ({@link #pool}); those every app has are here: {@link #hikari},
 * {@link #fanOut}, {@link #carriers}.
 */
public final class Signals implements AutoCloseable {
    public static final String PORT_ENV = "SIGNALS_PORT";
    public static final int SCHEMA = 1;

    /** A pool's state now; {@code waiting} null where the pool does not count its waiters. */
    public record Pool(int size, int busy, Integer waiting) {
    }

    private record Registered(String name, String kind, Supplier<Pool> now) {
    }

    private final String host;
    /** Null: SIGNALS_PORT unset, no server. */
    private final Integer port;
    private final List<Registered> pools = new CopyOnWriteArrayList<>();
    /** Pools the app has but cannot read, by "pools.<name>": reported under unavailable. */
    private final Map<String, String> unreadable = new TreeMap<>();

    private final OperatingSystemMXBean os;
    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private static final ThreadGroup ROOT = root();
    /**
     * The collectors whose count and time are stop-the-world pauses, the ones this reports: every
     * GarbageCollectorMXBean except ZGC's and Shenandoah's "... Cycles" beans (concurrent cycles, mostly not
     * paused; their pauses are the "... Pauses" beans). On G1, the targets' collector (the Dockerfiles'
     * -XX:+UseG1GC): "G1 Young Generation" (young and mixed pauses), "G1 Old Generation" (full GCs, paused)
     * and, since JDK 20, "G1 Concurrent GC", which counts the concurrent cycle's Remark and Cleanup pauses
     * only (its concurrent marking is not counted by any bean). Serial and Parallel: both beans, all paused.
     */
    private final List<GarbageCollectorMXBean> pauseCollectors = new ArrayList<>();
    private final AtomicLong maxPauseMs = new AtomicLong();
    private final NotificationListener onPause = this::onGc;
    private final List<NotificationEmitter> listening = new ArrayList<>();
    private final PerfData perf;
    private final String perfWhy;
    private HttpServer server;

    /** The server $SIGNALS_PORT asks for (none when unset); a malformed value fails startup naming it. */
    public static Signals fromEnv() {
        Map<String, String> env = System.getenv();
        String host = env.getOrDefault("BIND_ADDRESS", "127.0.0.1");
        return new Signals(host.isBlank() ? "127.0.0.1" : host, port(env));
    }

    static Integer port(Map<String, String> env) {
        String value = env.get(PORT_ENV);
        if (value == null || value.isBlank()) {
            return null;
        }
        int n;
        try {
            n = Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            n = 0;
        }
        if (n < 1 || n > 65535) {
            throw new IllegalArgumentException(PORT_ENV + "=" + value + ": give the port of GET /signals, 1 to 65535");
        }
        return n;
    }

    /** {@code port} null: no server; 0: an ephemeral port (tests). */
    Signals(String host, Integer port) {
        this.host = host;
        this.port = port;
        this.os = ManagementFactory.getPlatformMXBean(OperatingSystemMXBean.class);
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            if (!gc.getName().endsWith(" Cycles")) {
                pauseCollectors.add(gc);
            }
        }
        PerfData p = null;
        String why = null;
        if (port != null) {
            try {
                p = PerfData.open();
                if (p.get("sun.rt.safepoints") < 0) {
                    why = "HotSpot's jvmstat counters have no sun.rt.safepoints";
                    p = null;
                }
            } catch (IOException | RuntimeException e) {
                why = "HotSpot's jvmstat counters cannot be read: " + e.getMessage();
            }
        }
        this.perf = p;
        this.perfWhy = why;
    }

    /**
     * Registers a pool read at each GET /signals, in place of one of the same name; {@code now} may throw, which
     * makes the pool unavailable with the exception's message.
     */
    public synchronized Signals pool(String name, String kind, Supplier<Pool> now) {
        pools.removeIf(p -> p.name().equals(name));
        unreadable.remove("pools." + name);
        pools.add(new Registered(name, kind, now));
        return this;
    }

    /** A pool the app has but cannot read: reported under unavailable as "pools.<name>". */
    public synchronized Signals unavailable(String pool, String why) {
        unreadable.put("pools." + pool, why);
        return this;
    }

    /** {@code hikari}: the pool's size, connections checked out, threads waiting for one. */
    public Signals hikari(HikariDataSource dataSource) {
        return pool("hikari", "connections", () -> {
            HikariPoolMXBean pool = dataSource.getHikariPoolMXBean();
            if (pool == null) {
                throw new IllegalStateException("the pool has not started");
            }
            return new Pool(dataSource.getMaximumPoolSize(), pool.getActiveConnections(),
                    pool.getThreadsAwaitingConnection());
        });
    }

    /** {@code fanout}: /fanout's fixed pool, its threads running a sub-task, the sub-tasks queued. */
    public Signals fanOut(FanOut fanOut) {
        return executor("fanout", (ThreadPoolExecutor) fanOut.executor());
    }

    /** A {@link ThreadPoolExecutor}: its maximum size, its threads running a task, the tasks queued. */
    public Signals executor(String name, ThreadPoolExecutor executor) {
        return pool(name, "threads", () -> new Pool(executor.getMaximumPoolSize(), executor.getActiveCount(),
                executor.getQueue().size()));
    }

    /**
     * {@code carriers}: the virtual threads' scheduler (jdk.management.VirtualThreadSchedulerMXBean, JDK 24+,
     * found by name so that this compiles on 21): size its parallelism, busy the virtual threads mounted, waiting
     * those queued. Apps call it when their requests run on virtual threads (spring-mvc-virtual, javalin-virtual,
     * spring-webflux-virtual), not otherwise: a platform-thread app has no carriers worth a row. The scheduler
     * may add carriers beyond its parallelism while some are pinned or blocked in the JDK; busy is then capped
     * at the parallelism (the contract's busy is at most the size).
     */
    public Signals carriers() {
        Class<?> type;
        try {
            type = Class.forName("jdk.management.VirtualThreadSchedulerMXBean");
        } catch (ClassNotFoundException e) {
            return unavailable("carriers", "jdk.management.VirtualThreadSchedulerMXBean needs JDK 24 or later, this is "
                    + Runtime.version().feature());
        }
        try {
            Object bean = ManagementFactory.getPlatformMXBean(type.asSubclass(PlatformManagedObject.class));
            Method parallelism = type.getMethod("getParallelism");
            Method mounted = type.getMethod("getMountedVirtualThreadCount");
            Method queued = type.getMethod("getQueuedVirtualThreadCount");
            return pool("carriers", "threads", () -> {
                try {
                    return new Pool((Integer) parallelism.invoke(bean), (Integer) mounted.invoke(bean),
                            (int) Math.min(Integer.MAX_VALUE, (Long) queued.invoke(bean)));
                } catch (ReflectiveOperationException e) {
                    throw new IllegalStateException(e);
                }
            });
        } catch (ReflectiveOperationException | RuntimeException e) {
            return unavailable("carriers", "VirtualThreadSchedulerMXBean: " + e);
        }
    }

    /** Starts the server when SIGNALS_PORT is set, and the GC listeners that give maxPauseMs; else nothing. */
    public synchronized Signals start() throws IOException {
        if (port == null || server != null) {
            return this;
        }
        for (GarbageCollectorMXBean gc : pauseCollectors) {
            if (gc instanceof NotificationEmitter emitter) {
                emitter.addNotificationListener(onPause, null, null);
                listening.add(emitter);
            }
        }
        HttpServer s = HttpServer.create(new InetSocketAddress(host, port), 0);
        s.createContext("/", this::handle);
        s.setExecutor(null); // the dispatcher thread answers: no executor, no thread pool
        // The dispatcher thread is a daemon when the thread that starts it is one (it inherits the flag).
        Thread starter = new Thread(s::start, "iotbench-signals-start");
        starter.setDaemon(true);
        starter.start();
        try {
            starter.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        server = s;
        return this;
    }

    /** The bound port, or -1 without a server. */
    public synchronized int port() {
        return server == null ? -1 : server.getAddress().getPort();
    }

    @Override
    public synchronized void close() {
        if (server != null) {
            server.stop(0);
            server = null;
        }
        for (NotificationEmitter emitter : listening) {
            try {
                emitter.removeNotificationListener(onPause);
            } catch (ListenerNotFoundException ignored) {
                // already gone
            }
        }
        listening.clear();
    }

    private void handle(HttpExchange exchange) throws IOException {
        Thread.currentThread().setName("iotbench-signals");
        try {
            int status;
            byte[] body;
            if (!"/signals".equals(exchange.getRequestURI().getPath())) {
                status = 404;
                body = "{\"error\":\"not found\"}".getBytes(StandardCharsets.UTF_8);
            } else if (!"GET".equals(exchange.getRequestMethod())) {
                status = 405;
                body = "{\"error\":\"GET only\"}".getBytes(StandardCharsets.UTF_8);
            } else {
                status = 200;
                body = read().getBytes(StandardCharsets.UTF_8);
            }
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(status, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        } finally {
            exchange.close();
        }
    }

    /** A GC notification: a pause of a pause collector (onGc is registered on those only). */
    private void onGc(Notification n, Object handback) {
        if (!GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(n.getType())) {
            return;
        }
        // The composite's own duration, without building a GcInfo and its memory-usage maps.
        CompositeData info = (CompositeData) ((CompositeData) n.getUserData()).get("gcInfo");
        recordPause((Long) info.get("duration"));
    }

    /** A pause of {@code ms} (GcInfo's duration: whole milliseconds). */
    void recordPause(long ms) {
        maxPauseMs.accumulateAndGet(ms, Math::max);
    }

    /** The answer of one GET /signals; "since the previous read" values restart. */
    synchronized String read() {
        Map<String, String> unavailable = new TreeMap<>(unreadable);
        StringBuilder json = new StringBuilder(512);
        json.append("{\"schema\":").append(SCHEMA).append(",\"runtime\":\"jvm\"");

        long cpuNs = os == null ? -1 : os.getProcessCpuTime();
        json.append(",\"cpuMs\":");
        if (cpuNs < 0) {
            json.append("null");
            unavailable.put("cpuMs", "OperatingSystemMXBean.getProcessCpuTime is not supported here");
        } else {
            ms(json, cpuNs);
        }

        long count = 0;
        long pauseMs = 0;
        for (GarbageCollectorMXBean gc : pauseCollectors) {
            count += Math.max(0, gc.getCollectionCount());
            pauseMs += Math.max(0, gc.getCollectionTime());
        }
        json.append(",\"gc\":{\"count\":").append(count).append(",\"pauseMs\":").append(pauseMs)
                .append(",\"maxPauseMs\":").append(maxPauseMs.getAndSet(0)).append('}');

        Long jit = RuntimeInfo.jitCompileMs(false);
        json.append(",\"jitMs\":").append(jit == null ? "null" : jit.toString());
        if (jit == null) {
            unavailable.put("jitMs", "the JIT compiler threads' /proc/self/task files cannot be read");
        }

        json.append(",\"safepoint\":");
        if (perf == null) {
            json.append("null");
            unavailable.put("safepoint", perfWhy == null ? "no signals server" : perfWhy);
        } else {
            safepoint(json);
        }

        json.append(",\"eventLoop\":null");
        unavailable.put("eventLoop", "the JVM has no event loop of its own; Netty's loops, where an app has them, "
                + "are a pool");

        json.append(",\"threads\":{\"live\":").append(threads.getThreadCount()).append(",\"blocked\":")
                .append(blocked()).append('}');

        json.append(",\"pools\":[");
        boolean first = true;
        for (Registered r : pools) {
            Pool p;
            try {
                p = r.now().get();
            } catch (RuntimeException e) {
                unavailable.put("pools." + r.name(), String.valueOf(e.getMessage()));
                continue;
            }
            if (p == null || p.size() < 1) {
                unavailable.put("pools." + r.name(), "no size to report yet");
                continue;
            }
            json.append(first ? "" : ",").append("{\"name\":");
            first = false;
            string(json, r.name()).append(",\"kind\":");
            string(json, r.kind()).append(",\"size\":").append(p.size())
                    .append(",\"busy\":").append(Math.max(0, Math.min(p.busy(), p.size())))
                    .append(",\"waiting\":").append(p.waiting() == null ? "null" : Math.max(0, p.waiting()))
                    .append('}');
        }
        json.append("],\"unavailable\":{");
        first = true;
        for (Map.Entry<String, String> e : unavailable.entrySet()) {
            json.append(first ? "" : ",");
            first = false;
            string(json, e.getKey()).append(':');
            string(json, e.getValue());
        }
        return json.append("}}").toString();
    }

    /**
     * HotSpot's safepoints so far (sun.rt.safepoints) and the time from each one's start until the threads
     * resume: reaching it (sun.rt.safepointSyncTime) plus the operation at it (sun.rt.safepointTime), the
     * "Total" of -Xlog:safepoint. Ticks of sun.os.hrt.frequency (ns on Linux).
     */
    private void safepoint(StringBuilder json) {
        long n = perf.get("sun.rt.safepoints");
        long ticks = Math.max(0, perf.get("sun.rt.safepointSyncTime")) + Math.max(0, perf.get("sun.rt.safepointTime"));
        long frequency = perf.get("sun.os.hrt.frequency");
        long ns = frequency == 1_000_000_000L || frequency <= 0 ? ticks
                : (long) (ticks * (1_000_000_000.0 / frequency));
        json.append("{\"count\":").append(Math.max(0, n)).append(",\"ms\":");
        ms(json, ns);
        json.append('}');
    }

    /**
     * Platform threads BLOCKED on a monitor now: each one's state from the root thread group's list (a copy of
     * the JVM's thread list, then a field read per thread), a fraction of ThreadMXBean.getThreadInfo's cost,
     * which builds a ThreadInfo, lock names included, per thread. Virtual threads are not in it.
     */
    private int blocked() {
        Thread[] all = new Thread[ROOT.activeCount() + 16];
        int n = ROOT.enumerate(all, true);
        int blocked = 0;
        for (int i = 0; i < n; i++) {
            if (all[i].getState() == Thread.State.BLOCKED) {
                blocked++;
            }
        }
        return blocked;
    }

    private static ThreadGroup root() {
        ThreadGroup g = Thread.currentThread().getThreadGroup();
        while (g.getParent() != null) {
            g = g.getParent();
        }
        return g;
    }

    /** Nanoseconds as milliseconds, three decimals. */
    private static void ms(StringBuilder json, long ns) {
        long us = ns / 1_000;
        json.append(us / 1_000).append('.');
        long frac = us % 1_000;
        if (frac < 100) {
            json.append('0');
        }
        if (frac < 10) {
            json.append('0');
        }
        json.append(frac);
    }

    private static StringBuilder string(StringBuilder json, String s) {
        json.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                json.append('\\').append(c);
            } else if (c < 0x20) {
                json.append(String.format("\\u%04x", (int) c));
            } else {
                json.append(c);
            }
        }
        return json.append('"');
    }
}
