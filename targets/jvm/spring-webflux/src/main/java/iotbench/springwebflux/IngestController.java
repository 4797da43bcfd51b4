package iotbench.springwebflux;

import java.time.Duration;

import com.fasterxml.jackson.databind.JsonNode;
import iotbench.contract.Answers;
import iotbench.contract.Answers.Fast;
import iotbench.contract.Answers.Ingested;
import iotbench.contract.Answers.Realistic;
import iotbench.contract.Enrichment;
import iotbench.contract.ReadingStore;
import iotbench.contract.ReadingValidator;
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
                .map(id -> new Ingested(id, Answers.elapsedMs(start)));
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
                .map(id -> Realistic.of(id, start, Enrichment.of(reading)));
    }
}
