package iotbench.javalin;

import io.javalin.http.Context;
import iotbench.contract.FanOut;
import iotbench.contract.ReadingStore;
import iotbench.contract.Answers.Cpu;
import iotbench.contract.Answers.Fib;
import iotbench.contract.Answers.Ok;
import iotbench.contract.Answers.Stats;
import iotbench.contract.Answers.Waited;
import iotbench.contract.ReadingValidator;
import iotbench.contract.Work;

/** GET /cpu, /blocking, /fanout, /downstream, /stats and POST /process-data. */
final class WorkHandlers {
    private final ReadingValidator validator;
    private final ReadingStore store;
    private final FanOut fanOut;

    WorkHandlers(ReadingValidator validator, ReadingStore store, FanOut fanOut) {
        this.validator = validator;
        this.store = store;
        this.fanOut = fanOut;
    }

    void cpu(Context ctx) {
        ctx.json(Cpu.compute());
    }

    void blocking(Context ctx) throws InterruptedException {
        long ms = ReadingValidator.blockingMs(ctx.queryParam("ms"));
        Thread.sleep(ms);
        ctx.json(new Waited(ms));
    }

    /** The request's thread (Jetty's pool or a virtual thread) waits for the ten sub-tasks on the fan-out pool. */
    void fanout(Context ctx) {
        ctx.json(fanOut.run());
    }

    void processData(Context ctx) {
        int k = validator.fibArgument(ctx.body());
        ctx.json(new Fib(k, Work.fib(k)));
    }

    void downstream(Context ctx) throws InterruptedException {
        Thread.sleep(20);
        ctx.json(new Ok(true));
    }

    void stats(Context ctx) throws Exception {
        ctx.json(new Stats(store.highestId()));
    }
}
