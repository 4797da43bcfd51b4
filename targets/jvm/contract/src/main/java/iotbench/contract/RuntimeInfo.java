package iotbench.contract;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Collectors;

/** What /health reports about the JVM. */
public final class RuntimeInfo {
    /** The GarbageCollectorMXBean names, joined by commas. */
    public static final String GC = ManagementFactory.getGarbageCollectorMXBeans().stream()
            .map(GarbageCollectorMXBean::getName)
            .collect(Collectors.joining(","));

    private static final Path TASKS = Path.of("/proc/self/task");

    /**
     * Each compiler thread's busy time last read, in ns, by thread id and start time: HotSpot ends idle
     * compiler threads and starts new ones, and an ended thread's time must still count.
     */
    private static final Map<String, Long> COMPILER_BUSY_NS = new HashMap<>();

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
    public static synchronized Long jitCompileMs() {
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
            for (Path task : tasks) {
                try {
                    if (!isCompiler(Files.readString(task.resolve("comm")))) {
                        continue;
                    }
                    String thread = task.getFileName() + "@" + startTime(Files.readString(task.resolve("stat")));
                    COMPILER_BUSY_NS.merge(thread, busyNs(Files.readString(task.resolve("schedstat"))), Math::max);
                } catch (NoSuchFileException ended) {
                    // The thread ended between the listing and the read: its last time read still counts.
                }
            }
        } catch (IOException | UncheckedIOException | SecurityException | IllegalArgumentException e) {
            return null;
        }
        return COMPILER_BUSY_NS.values().stream().mapToLong(Long::longValue).sum() / 1_000_000;
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
