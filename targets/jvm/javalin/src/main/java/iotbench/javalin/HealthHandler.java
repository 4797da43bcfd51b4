package iotbench.javalin;

import io.javalin.http.Context;
import iotbench.contract.RuntimeInfo;

/** GET /health: threadModel is the request thread's own kind, read at runtime. */
final class HealthHandler {

    record Health(String status, String runtime, String framework, String threadModel,
                  int availableProcessors, long maxHeapBytes, String gc, Long jitCompileMs, String server) {
    }

    private final String server;

    HealthHandler(String server) {
        this.server = server;
    }

    void health(Context ctx) {
        Runtime rt = Runtime.getRuntime();
        ctx.json(new Health("UP", RuntimeInfo.runtime(), "javalin",
                Thread.currentThread().isVirtual() ? "virtual" : "platform",
                rt.availableProcessors(), rt.maxMemory(), RuntimeInfo.GC, RuntimeInfo.jitCompileMs(), server));
    }
}
