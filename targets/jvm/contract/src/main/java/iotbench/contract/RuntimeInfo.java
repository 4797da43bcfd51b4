package iotbench.contract;

import java.lang.management.CompilationMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.stream.Collectors;

/** What /health reports about the JVM. */
public final class RuntimeInfo {
    /** The GarbageCollectorMXBean names, joined by commas. */
    public static final String GC = ManagementFactory.getGarbageCollectorMXBeans().stream()
            .map(GarbageCollectorMXBean::getName)
            .collect(Collectors.joining(","));

    private static final CompilationMXBean JIT = ManagementFactory.getCompilationMXBean();

    private RuntimeInfo() {
    }

    /**
     * The JIT compilers' time so far, in ms (summed over their threads); null where the JVM does not
     * keep it. iotbench's warm-up until steady waits for it to stop growing: on one CPU the compiler
     * threads take the request threads' CPU for tens of seconds.
     */
    public static Long jitCompileMs() {
        return JIT != null && JIT.isCompilationTimeMonitoringSupported() ? JIT.getTotalCompilationTime() : null;
    }

    public static String runtime() {
        return "java " + Runtime.version();
    }
}
