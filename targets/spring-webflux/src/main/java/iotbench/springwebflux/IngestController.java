package iotbench.springwebflux;

import java.time.Duration;

import com.fasterxml.jackson.databind.JsonNode;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * The body is taken as a String (WebFlux reads it without blocking before the method runs) so that the
 * payload is stored exactly as received. Parsing and validation run on the event loop; the insert through
 * {@link Offload}.
 */
@RestController
class IngestController {
    static final Duration INGEST_WAIT = Duration.ofMillis(50);

    record Ingested(long id, double processingMs) {
    }

    record Fast(long id) {
    }

    record Realistic(long id, double processingMs, double mean, double min, double max, double stddev,
                     double pi) {
    }

    private final ReadingValidator validator;
    private final ReadingStore store;
    private final Offload offload;

    IngestController(ReadingValidator validator, ReadingStore store, Offload offload) {
        this.validator = validator;
        this.store = store;
        this.offload = offload;
    }

    @PostMapping("/ingest")
    Mono<Ingested> ingest(@RequestBody(required = false) String body, ServerWebExchange exchange) {
        long start = System.nanoTime();
        JsonNode reading = validator.validate(body);
        String deviceId = reading.get("deviceId").textValue();
        long ts = reading.get("timestamp").longValue();
        return offload.call(exchange, () -> store.insert(deviceId, ts, body))
                // stands for a blocking I/O call: a timer, no thread and no DB connection is held
                .delayUntil(id -> Mono.delay(INGEST_WAIT))
                .map(id -> new Ingested(id, elapsedMs(start)));
    }

    @PostMapping("/ingest/fast")
    Mono<Fast> fast(@RequestBody(required = false) String body, ServerWebExchange exchange) {
        JsonNode reading = validator.parse(body);
        String deviceId = reading.path("deviceId").asText("");
        long ts = reading.path("timestamp").asLong(0);
        return offload.call(exchange, () -> store.insert(deviceId, ts, body)).map(Fast::new);
    }

    @PostMapping("/ingest/realistic")
    Mono<Realistic> realistic(@RequestBody(required = false) String body, ServerWebExchange exchange) {
        long start = System.nanoTime();
        JsonNode reading = validator.validate(body);
        String deviceId = reading.get("deviceId").textValue();
        long ts = reading.get("timestamp").longValue();
        // Offload hands the id back on the event loop: the enrichment and Monte Carlo run there.
        return offload.call(exchange, () -> store.insert(deviceId, ts, body))
                .map(id -> enrich(id, reading, start));
    }

    private static Realistic enrich(long id, JsonNode reading, long start) {
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
