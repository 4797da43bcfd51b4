package iotbench.springwebflux;

import java.io.IOException;
import java.net.URI;
import java.sql.SQLException;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import iotbench.contract.Answers.EnterpriseDone;
import iotbench.contract.Enterprise;
import iotbench.contract.LruCache;
import iotbench.contract.ReadingStore;
import iotbench.contract.StandardReading;
import iotbench.contract.Summary;
import org.springframework.core.env.Environment;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * The "enterprise" request: DB write, DB read, file I/O, downstream HTTP call, cache lookup.
 * Steps 1 to 3 block (JDBC, java.nio.file) and run as one task through {@link Offload}; step 4 is a
 * non-blocking {@link WebClient} call; step 5 runs on the event loop that delivers the downstream answer.
 */
@RestController
class EnterpriseController {
    private record Stored(long id, List<Summary> rows, int bytes) {
    }

    private final ReadingStore store;
    private final ObjectMapper mapper;
    private final Offload offload;
    private final WebClient web;
    private final URI downstreamUri;
    private final String enterprisePayload;
    private final long enterpriseTs;
    private final LruCache<String, List<Summary>> cache = new LruCache<>(Enterprise.CACHE_ENTRIES);

    EnterpriseController(ReadingStore store, ObjectMapper mapper, StandardReading standard, Offload offload,
                         WebClient.Builder webClientBuilder, Environment env) {
        this.store = store;
        this.mapper = mapper;
        this.offload = offload;
        this.web = webClientBuilder.build();
        String url = env.getProperty("DOWNSTREAM_URL");
        if (url == null || url.isBlank()) {
            url = "http://127.0.0.1:" + env.getProperty("PORT", "8080") + "/downstream";
        }
        this.downstreamUri = URI.create(url);
        this.enterprisePayload = standard.withDevice(Enterprise.DEVICE_ID);
        this.enterpriseTs = standard.timestamp();
    }

    @GetMapping("/enterprise")
    Mono<EnterpriseDone> enterprise(ServerWebExchange exchange) {
        return offload.call(exchange, this::storeAndFile)
                .flatMap(stored -> web.get().uri(downstreamUri).retrieve().bodyToMono(JsonNode.class)
                        // 4. the downstream JSON, parsed; an empty body is a failure, not a 2xx
                        .switchIfEmpty(Mono.error(() -> new IllegalStateException("downstream answered no JSON")))
                        .map(downstream -> {
                            // 5. LRU lookup, storing step 2's rows on a miss
                            String key = Enterprise.cacheKey(stored.id());
                            boolean hit = cache.get(key) != null;
                            if (!hit) {
                                cache.put(key, stored.rows());
                            }
                            return new EnterpriseDone(stored.id(), stored.rows().size(), stored.bytes(), true, hit);
                        }));
    }

    /** Steps 1 to 3, blocking: runs on the blocking scheduler. */
    private Stored storeAndFile() throws IOException, SQLException {
        // 1. insert the standard reading as device "enterprise"
        long id = store.insert(Enterprise.DEVICE_ID, enterpriseTs, enterprisePayload);

        // 2. the latest 10 readings
        List<Summary> rows = store.latestSummaries(Enterprise.ROWS);

        // 3. write them as JSON, space-padded to 4096 bytes, to a new temp file; read it back; delete it
        int bytes = Enterprise.fileRoundTrip(mapper.writeValueAsBytes(rows));
        return new Stored(id, rows, bytes);
    }
}
