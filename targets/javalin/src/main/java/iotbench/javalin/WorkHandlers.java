package iotbench.javalin;

import com.fasterxml.jackson.databind.JsonNode;
import io.javalin.http.Context;

/** GET /cpu, /blocking, /downstream, /stats and POST /process-data. */
final class WorkHandlers {

    record Cpu(double pi, long trace, int primes) {
    }

    record Waited(long waitedMs) {
    }

    record Fib(int n, long result) {
    }

    record Ok(boolean ok) {
    }

    record Stats(long rows) {
    }

    private final ReadingValidator validator;
    private final ReadingStore store;

    WorkHandlers(ReadingValidator validator, ReadingStore store) {
        this.validator = validator;
        this.store = store;
    }

    void cpu(Context ctx) {
        double pi = Work.monteCarloPi(1_000_000);
        double trace = Work.matrixTrace();
        int primes = Work.countPrimes(100_000);
        ctx.json(new Cpu(pi, (long) trace, primes));
    }

    void blocking(Context ctx) throws InterruptedException {
        String param = ctx.queryParam("ms");
        long ms = 500;
        if (param != null) {
            try {
                ms = Long.parseLong(param.trim());
            } catch (NumberFormatException e) {
                throw new BadRequestException("ms must be an integer from 0 to 10000");
            }
        }
        if (ms < 0 || ms > 10_000) {
            throw new BadRequestException("ms must be an integer from 0 to 10000");
        }
        Thread.sleep(ms);
        ctx.json(new Waited(ms));
    }

    void processData(Context ctx) {
        JsonNode n = validator.parse(ctx.body()).get("n");
        if (n == null || !n.isIntegralNumber() || !n.canConvertToInt() || n.intValue() < 1 || n.intValue() > 35) {
            throw new BadRequestException("n must be an integer from 1 to 35");
        }
        int k = n.intValue();
        ctx.json(new Fib(k, Work.fib(k)));
    }

    void downstream(Context ctx) throws InterruptedException {
        Thread.sleep(20);
        ctx.json(new Ok(true));
    }

    void stats(Context ctx) throws Exception {
        ctx.json(new Stats(store.count()));
    }
}
