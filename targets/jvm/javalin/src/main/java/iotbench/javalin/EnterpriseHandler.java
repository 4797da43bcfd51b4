package iotbench.javalin;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.javalin.http.Context;
import iotbench.contract.Answers.EnterpriseDone;
import iotbench.contract.Enterprise;
import iotbench.contract.LruCache;
import iotbench.contract.ReadingStore;
import iotbench.contract.StandardReading;
import iotbench.contract.Summary;

/** GET /enterprise: DB write, DB read, file I/O, downstream HTTP call, cache lookup, in the contract's order. */
final class EnterpriseHandler {
    static final Duration DOWNSTREAM_TIMEOUT = Duration.ofSeconds(15);

    private final ReadingStore store;
    private final ObjectMapper mapper;
    private final HttpClient http;
    private final HttpRequest downstreamRequest;
    private final String enterprisePayload;
    private final long enterpriseTs;
    private final LruCache<String, List<Summary>> cache = new LruCache<>(Enterprise.CACHE_ENTRIES);

    EnterpriseHandler(ReadingStore store, ObjectMapper mapper, StandardReading standard, HttpClient http,
                      URI downstreamUri) {
        this.store = store;
        this.mapper = mapper;
        this.http = http;
        this.downstreamRequest = HttpRequest.newBuilder(downstreamUri).timeout(DOWNSTREAM_TIMEOUT).GET().build();
        this.enterprisePayload = standard.withDevice(Enterprise.DEVICE_ID);
        this.enterpriseTs = standard.timestamp();
    }

    void enterprise(Context ctx) throws Exception {
        // 1. insert the standard reading as device "enterprise"
        long id = store.insert(Enterprise.DEVICE_ID, enterpriseTs, enterprisePayload);

        // 2. the latest 10 readings
        List<Summary> rows = store.latestSummaries(Enterprise.ROWS);

        // 3. write them as JSON, space-padded to 4096 bytes, to a new temp file; read it back; delete it
        int bytes = Enterprise.fileRoundTrip(mapper.writeValueAsBytes(rows));

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
        String key = Enterprise.cacheKey(id);
        boolean hit = cache.get(key) != null;
        if (!hit) {
            cache.put(key, rows);
        }
        ctx.json(new EnterpriseDone(id, rows.size(), bytes, true, hit));
    }
}
