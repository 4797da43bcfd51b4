package iotbench.springmvc;

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
import org.springframework.web.client.RestClient;

/** The "enterprise" request: DB write, DB read, file I/O, downstream HTTP call, cache lookup. */
@RestController
class EnterpriseController {
    private final ReadingStore store;
    private final ObjectMapper mapper;
    private final RestClient rest;
    private final URI downstreamUri;
    private final String enterprisePayload;
    private final long enterpriseTs;
    private final LruCache<String, List<Summary>> cache = new LruCache<>(Enterprise.CACHE_ENTRIES);

    EnterpriseController(ReadingStore store, ObjectMapper mapper, StandardReading standard,
                         RestClient.Builder restClientBuilder, Environment env) {
        this.store = store;
        this.mapper = mapper;
        this.rest = restClientBuilder.build();
        String url = env.getProperty("DOWNSTREAM_URL");
        if (url == null || url.isBlank()) {
            url = "http://127.0.0.1:" + env.getProperty("PORT", "8080") + "/downstream";
        }
        this.downstreamUri = URI.create(url);
        this.enterprisePayload = standard.withDevice(Enterprise.DEVICE_ID);
        this.enterpriseTs = standard.timestamp();
    }

    @GetMapping("/enterprise")
    EnterpriseDone enterprise() throws IOException, SQLException {
        // 1. insert the standard reading as device "enterprise"
        long id = store.insert(Enterprise.DEVICE_ID, enterpriseTs, enterprisePayload);

        // 2. the latest 10 readings
        List<Summary> rows = store.latestSummaries(Enterprise.ROWS);

        // 3. write them as JSON, space-padded to 4096 bytes, to a new temp file; read it back; delete it
        int bytes = Enterprise.fileRoundTrip(mapper.writeValueAsBytes(rows));

        // 4. the downstream call, its JSON parsed
        JsonNode downstream = rest.get().uri(downstreamUri).retrieve().body(JsonNode.class);
        if (downstream == null) {
            throw new IllegalStateException("downstream answered no JSON");
        }

        // 5. LRU lookup, storing step 2's rows on a miss
        String key = Enterprise.cacheKey(id);
        boolean hit = cache.get(key) != null;
        if (!hit) {
            cache.put(key, rows);
        }
        return new EnterpriseDone(id, rows.size(), bytes, true, hit);
    }
}
