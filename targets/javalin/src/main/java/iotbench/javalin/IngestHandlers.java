package iotbench.javalin;

import com.fasterxml.jackson.databind.JsonNode;
import io.javalin.http.Context;

/** POST /ingest, /ingest/fast, /ingest/realistic. The body is read as a String and stored as received. */
final class IngestHandlers {

    record Ingested(long id, double processingMs) {
    }

    record Fast(long id) {
    }

    record Realistic(long id, double processingMs, double mean, double min, double max, double stddev,
                     double pi) {
    }

    private final ReadingValidator validator;
    private final ReadingStore store;

    IngestHandlers(ReadingValidator validator, ReadingStore store) {
        this.validator = validator;
        this.store = store;
    }

    void ingest(Context ctx) throws Exception {
        long start = System.nanoTime();
        String body = ctx.body();
        JsonNode reading = validator.validate(body);
        long id = store.insert(reading.get("deviceId").textValue(), reading.get("timestamp").longValue(), body);
        Thread.sleep(50); // stands for a blocking I/O call; no DB connection is held here
        ctx.json(new Ingested(id, elapsedMs(start)));
    }

    void fast(Context ctx) throws Exception {
        String body = ctx.body();
        JsonNode reading = validator.parse(body);
        long id = store.insert(reading.path("deviceId").asText(""), reading.path("timestamp").asLong(0), body);
        ctx.json(new Fast(id));
    }

    void realistic(Context ctx) throws Exception {
        long start = System.nanoTime();
        String body = ctx.body();
        JsonNode reading = validator.validate(body);
        long id = store.insert(reading.get("deviceId").textValue(), reading.get("timestamp").longValue(), body);

        double[] values = new double[ReadingValidator.METRICS];
        double sum = 0;
        double min = Double.POSITIVE_INFINITY;
        double max = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < values.length; i++) {
            double v = reading.get(ReadingValidator.METRIC_NAMES[i]).doubleValue();
            values[i] = v;
            sum += v;
            min = Math.min(min, v);
            max = Math.max(max, v);
        }
        double mean = sum / values.length;
        double squares = 0;
        for (double v : values) {
            squares += (v - mean) * (v - mean);
        }
        double stddev = Math.sqrt(squares / values.length); // population standard deviation
        double pi = Work.monteCarloPi(10_000);
        ctx.json(new Realistic(id, elapsedMs(start), mean, min, max, stddev, pi));
    }

    static double elapsedMs(long startNanos) {
        return (System.nanoTime() - startNanos) / 1_000_000.0;
    }
}
