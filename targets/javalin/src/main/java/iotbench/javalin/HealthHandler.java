package iotbench.javalin;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.stream.Collectors;

import io.javalin.http.Context;

/** GET /health: threadModel is the request thread's own kind, read at runtime. */
final class HealthHandler {

    record Health(String status, String runtime, String framework, String threadModel,
                  int availableProcessors, long maxHeapBytes, String gc, String server) {
    }

    private static final String GC = ManagementFactory.getGarbageCollectorMXBeans().stream()
            .map(GarbageCollectorMXBean::getName)
            .collect(Collectors.joining(","));

    private final String server;

    HealthHandler(String server) {
        this.server = server;
    }

    void health(Context ctx) {
        Runtime rt = Runtime.getRuntime();
        ctx.json(new Health("UP", "java " + Runtime.version(), "javalin",
                Thread.currentThread().isVirtual() ? "virtual" : "platform",
                rt.availableProcessors(), rt.maxMemory(), GC, server));
    }
}
