package iotbench.contract;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.stream.Collectors;

/** What /health reports about the JVM. */
public final class RuntimeInfo {
    /** The GarbageCollectorMXBean names, joined by commas. */
    public static final String GC = ManagementFactory.getGarbageCollectorMXBeans().stream()
            .map(GarbageCollectorMXBean::getName)
            .collect(Collectors.joining(","));

    private RuntimeInfo() {
    }

    public static String runtime() {
        return "java " + Runtime.version();
    }
}
