package iotbench.contract;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/** What /health reports about the JVM. */
public final class RuntimeInfo {
    /** The GarbageCollectorMXBean names, joined by commas. */
    public static final String GC = ManagementFactory.getGarbageCollectorMXBeans().stream()
            .map(GarbageCollectorMXBean::getName)
            .collect(Collectors.joining(","));

    private static final Path TASKS = Path.of("/proc/self/task");
    /** How often a read for GET /signals lists the tasks anew, to find compiler threads HotSpot started. */
    static final long RELIST_NS = 5_000_000_000L;

    /**
     * Each compiler thread's busy time last read, in ns, by thread id and start time: HotSpot ends idle
     * compiler threads and starts new ones, and an ended thread's time must still count.
     */
    private static final Map<String, Long> COMPILER_BUSY_NS = new HashMap<>();

    /**
     * Whether each task of the last listing is a compiler thread, by task id, once two listings in a row read the
     * same name: a thread is named a moment after it starts (until then it shows its creator's name), and never
     * renamed after that. So a listing opens the comm file of new threads only, not of every thread (hundreds in
     * the thread-per-request apps). A task id leaves the map with its thread, so a reused id is read afresh.
     */
    private static final Map<String, Boolean> COMPILER_BY_TASK = new HashMap<>();
    /** The name read once for tasks not yet settled in COMPILER_BY_TASK. */
    private static final Map<String, Boolean> FIRST_READ = new HashMap<>();
    /**
     * The compiler threads of the last listing by task id, each with its schedstat file kept open: a read is one
     * pread per compiler thread (a /proc file read from offset 0 is generated anew), which fails once the thread
     * has ended.
     */
    private static final Map<String, Compiler> COMPILERS = new HashMap<>();
    private static final ByteBuffer SCHEDSTAT = ByteBuffer.allocate(128);
    private static boolean listed;
    private static long listedAt;

    private record Compiler(String key, FileChannel schedstat) {
    }

    private RuntimeInfo() {
    }

    /**
     * The JIT compiler threads' busy time so far, in ms: the time they ran or waited for a CPU to run on,
     * summed over them; null where /proc does not give it. iotbench's warm-up until steady waits for it
     * to stop growing. Neither CPU time nor CompilationMXBean's figure would do: on one CPU shared with
     * hundreds of request threads a compiler thread gets a few percent of it and compiles on for minutes,
     * its CPU time small all along; CompilationMXBean adds each compilation's elapsed time only when it
     * ends, so a compilation that takes ten seconds looks, for those ten seconds, like a JIT at rest.
     */
    public static Long jitCompileMs() {
        return jitCompileMs(true);
    }

    /**
     * The same figure; {@code list} false (GET /signals, once a second) lists the tasks (a few hundred
     * microseconds with hundreds of threads) only every {@link #RELIST_NS}: a compiler thread HotSpot starts in
     * between is found at the next listing, with all its time so far, so the figure is at most that late.
     */
    static synchronized Long jitCompileMs(boolean list) {
        try {
            if (list || !listed || System.nanoTime() - listedAt >= RELIST_NS) {
                list();
            }
            for (Iterator<Compiler> it = COMPILERS.values().iterator(); it.hasNext(); ) {
                Compiler c = it.next();
                long busy;
                try {
                    SCHEDSTAT.clear();
                    int n = c.schedstat().read(SCHEDSTAT, 0);
                    busy = busyNs(new String(SCHEDSTAT.array(), 0, Math.max(0, n), StandardCharsets.US_ASCII));
                } catch (IOException | IllegalArgumentException ended) {
                    // The thread ended (ESRCH): its last time read still counts.
                    close(c);
                    it.remove();
                    continue;
                }
                COMPILER_BUSY_NS.merge(c.key(), busy, Math::max);
            }
        } catch (IOException | UncheckedIOException | SecurityException | IllegalArgumentException e) {
            return null;
        }
        long ns = 0;
        for (long busy : COMPILER_BUSY_NS.values()) {
            ns += busy;
        }
        return ns / 1_000_000;
    }

    /** Lists the tasks: opens the schedstat file of new compiler threads, closes those of ended ones. */
    private static void list() throws IOException {
        Set<String> seen = new HashSet<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
            for (Path task : tasks) {
                String id = task.getFileName().toString();
                seen.add(id);
                if (COMPILERS.containsKey(id)) {
                    continue;
                }
                try {
                    Boolean compiler = COMPILER_BY_TASK.get(id);
                    if (compiler == null) {
                        compiler = isCompiler(Files.readString(task.resolve("comm")));
                        if (compiler.equals(FIRST_READ.put(id, compiler))) {
                            COMPILER_BY_TASK.put(id, compiler);
                            FIRST_READ.remove(id);
                        }
                    }
                    if (compiler) {
                        String key = id + "@" + startTime(Files.readString(task.resolve("stat")));
                        COMPILERS.put(id, new Compiler(key, FileChannel.open(task.resolve("schedstat"),
                                StandardOpenOption.READ)));
                    }
                } catch (NoSuchFileException ended) {
                    // The thread ended between the listing and the read.
                }
            }
        }
        COMPILER_BY_TASK.keySet().retainAll(seen);
        FIRST_READ.keySet().retainAll(seen);
        for (Iterator<Map.Entry<String, Compiler>> it = COMPILERS.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, Compiler> e = it.next();
            if (!seen.contains(e.getKey())) {
                close(e.getValue());
                it.remove();
            }
        }
        listed = true;
        listedAt = System.nanoTime();
    }

    private static void close(Compiler c) {
        try {
            c.schedstat().close();
        } catch (IOException ignored) {
            // a /proc file: nothing to flush
        }
    }

    /**
     * Whether a thread's name (/proc comm) is a JIT compiler's: HotSpot names them "C1 CompilerThread0",
     * "C2 CompilerThread1", "JVMCI CompilerThread0"..., which Linux cuts to 15 characters.
     */
    static boolean isCompiler(String comm) {
        return comm.contains("CompilerT");
    }

    /** A thread's start time, from its /proc stat line (field 22, counted after the parenthesised name). */
    static String startTime(String stat) {
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
        if (f.length < 20) {
            throw new IllegalArgumentException("a /proc stat line cut short: " + stat);
        }
        return f[19];
    }

    /** A thread's time on a CPU plus its time waiting for one, in ns, from its /proc schedstat line. */
    static long busyNs(String schedstat) {
        String[] f = schedstat.trim().split(" ");
        if (f.length < 2) {
            throw new IllegalArgumentException("a /proc schedstat line cut short: " + schedstat);
        }
        return Long.parseLong(f[0]) + Long.parseLong(f[1]);
    }

    public static String runtime() {
        return "java " + Runtime.version();
    }
}
