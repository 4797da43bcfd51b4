package iotbench.springmvc;

import com.fasterxml.jackson.databind.JsonNode;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** The body is taken as a String so that the payload is stored exactly as received. */
@RestController
class IngestController {

    record Ingested(long id, double processingMs) {
    }

    record Fast(long id) {
    }

    record Realistic(long id, double processingMs, double mean, double min, double max, double stddev,
                     double pi) {
    }

    private final ReadingValidator validator;
    private final ReadingStore store;

    IngestController(ReadingValidator validator, ReadingStore store) {
        this.validator = validator;
        this.store = store;
    }

    @PostMapping("/ingest")
    Ingested ingest(@RequestBody(required = false) String body) throws InterruptedException {
        long start = System.nanoTime();
        JsonNode reading = validator.validate(body);
        long id = store.insert(reading.get("deviceId").textValue(), reading.get("timestamp").longValue(), body);
        Thread.sleep(50); // stands for a blocking I/O call; no DB connection is held here
        return new Ingested(id, elapsedMs(start));
    }

    @PostMapping("/ingest/fast")
    Fast fast(@RequestBody(required = false) String body) {
        JsonNode reading = validator.parse(body);
        long id = store.insert(reading.path("deviceId").asText(""), reading.path("timestamp").asLong(0), body);
        return new Fast(id);
    }

    @PostMapping("/ingest/realistic")
    Realistic realistic(@RequestBody(required = false) String body) {
        long start = System.nanoTime();
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
        double stddev = Math.sqrt(squares / values.length);
        double pi = Work.monteCarloPi(10_000);
        return new Realistic(id, elapsedMs(start), mean, min, max, stddev, pi);
    }

    static double elapsedMs(long startNanos) {
        return (System.nanoTime() - startNanos) / 1_000_000.0;
    }
}
