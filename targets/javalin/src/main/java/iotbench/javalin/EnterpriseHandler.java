package iotbench.javalin;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.javalin.http.Context;

/** GET /enterprise: DB write, DB read, file I/O, downstream HTTP call, cache lookup, in the contract's order. */
final class EnterpriseHandler {
    static final int ROWS = 10;
    static final int FILE_BYTES = 4096;
    static final int CACHE_ENTRIES = 1000;
    static final Duration DOWNSTREAM_TIMEOUT = Duration.ofSeconds(15);

    record Enterprise(long id, int rows, int bytes, boolean downstream, boolean cacheHit) {
    }

    private final ReadingStore store;
    private final ObjectMapper mapper;
    private final HttpClient http;
    private final HttpRequest downstreamRequest;
    private final String enterprisePayload;
    private final long enterpriseTs;
    private final LruCache<String, List<ReadingStore.Summary>> cache = new LruCache<>(CACHE_ENTRIES);

    EnterpriseHandler(ReadingStore store, ObjectMapper mapper, HttpClient http, URI downstreamUri)
            throws IOException {
        this.store = store;
        this.mapper = mapper;
        this.http = http;
        this.downstreamRequest = HttpRequest.newBuilder(downstreamUri).timeout(DOWNSTREAM_TIMEOUT).GET().build();
        ObjectNode reading = store.standardReadingWithDevice("enterprise");
        this.enterprisePayload = mapper.writeValueAsString(reading);
        this.enterpriseTs = reading.get("timestamp").longValue();
    }

    void enterprise(Context ctx) throws Exception {
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

        // 4. the downstream call (shared HTTP/1.1 client), its JSON parsed
        HttpResponse<byte[]> response = http.send(downstreamRequest, HttpResponse.BodyHandlers.ofByteArray());
        if (response.statusCode() / 100 != 2) {
            throw new IllegalStateException("downstream answered " + response.statusCode());
        }
        JsonNode downstream = mapper.readTree(response.body());
        if (downstream == null || downstream.isMissingNode()) {
            throw new IllegalStateException("downstream answered no JSON");
        }

        // 5. LRU lookup, storing step 2's rows on a miss
        String key = "device:" + (id % 100);
        boolean hit = cache.get(key) != null;
        if (!hit) {
            cache.put(key, rows);
        }
        ctx.json(new Enterprise(id, rows.size(), readBack.length, true, hit));
    }
}
