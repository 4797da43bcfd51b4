package iotbench.springwebflux;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
    static final int ROWS = 10;
    static final int FILE_BYTES = 4096;
    static final int CACHE_ENTRIES = 1000;

    record Enterprise(long id, int rows, int bytes, boolean downstream, boolean cacheHit) {
    }

    private record Stored(long id, List<ReadingStore.Summary> rows, int bytes) {
    }

    private final ReadingStore store;
    private final ObjectMapper mapper;
    private final Offload offload;
    private final WebClient web;
    private final URI downstreamUri;
    private final String enterprisePayload;
    private final long enterpriseTs;
    private final LruCache<String, List<ReadingStore.Summary>> cache = new LruCache<>(CACHE_ENTRIES);

    EnterpriseController(ReadingStore store, ObjectMapper mapper, Offload offload,
                         WebClient.Builder webClientBuilder, Environment env) throws IOException {
        this.store = store;
        this.mapper = mapper;
        this.offload = offload;
        this.web = webClientBuilder.build();
        String url = env.getProperty("DOWNSTREAM_URL");
        if (url == null || url.isBlank()) {
            url = "http://127.0.0.1:" + env.getProperty("PORT", "8080") + "/downstream";
        }
        this.downstreamUri = URI.create(url);
        this.enterprisePayload = store.standardReadingWithDevice("enterprise");
        this.enterpriseTs = mapper.readTree(enterprisePayload).get("timestamp").longValue();
    }

    @GetMapping("/enterprise")
    Mono<Enterprise> enterprise(ServerWebExchange exchange) {
        return offload.call(exchange, this::storeAndFile)
                .flatMap(stored -> web.get().uri(downstreamUri).retrieve().bodyToMono(JsonNode.class)
                        // 4. the downstream JSON, parsed; an empty body is a failure, not a 2xx
                        .switchIfEmpty(Mono.error(() -> new IllegalStateException("downstream answered no JSON")))
                        .map(downstream -> {
                            // 5. LRU lookup, storing step 2's rows on a miss
                            String key = "device:" + (stored.id() % 100);
                            boolean hit = cache.get(key) != null;
                            if (!hit) {
                                cache.put(key, stored.rows());
                            }
                            return new Enterprise(stored.id(), stored.rows().size(), stored.bytes(), true, hit);
                        }));
    }

    /** Steps 1 to 3, blocking: runs on the blocking scheduler. */
    private Stored storeAndFile() throws IOException {
        // 1. insert the standard reading as device "enterprise"
        long id = store.insert("enterprise", enterpriseTs, enterprisePayload);

        // 2. the latest 10 readings
        List<ReadingStore.Summary> rows = store.latestSummaries(ROWS);

        // 3. write them as JSON, space-padded to 4096 bytes, to a new temp file; read it back; delete it
        byte[] json = mapper.writeValueAsBytes(rows);
        if (json.length > FILE_BYTES) {
            throw new IllegalStateException("rows JSON exceeds " + FILE_BYTES + " bytes");
        }
        byte[] padded = Arrays.copyOf(json, FILE_BYTES);
        Arrays.fill(padded, json.length, FILE_BYTES, (byte) ' ');
        Path file = Files.createTempFile("iotbench-", ".json");
        byte[] readBack;
        try {
            Files.write(file, padded);
            readBack = Files.readAllBytes(file);
        } finally {
            Files.deleteIfExists(file);
        }
        return new Stored(id, rows, readBack.length);
    }
}
