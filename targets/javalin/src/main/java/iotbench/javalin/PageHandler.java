package iotbench.javalin;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.javalin.http.Context;

/** GET /page: the latest 50 readings rendered by the precompiled jte template src/main/jte/page.jte. */
final class PageHandler {
    static final int ROWS = 50;

    private final ReadingStore store;
    private final ObjectMapper mapper;

    PageHandler(ReadingStore store, ObjectMapper mapper) {
        this.store = store;
        this.mapper = mapper;
    }

    void page(Context ctx) throws Exception {
        List<ReadingStore.Row> rows = store.latest(ROWS);
        List<PageRow> readings = new ArrayList<>(rows.size());
        for (ReadingStore.Row row : rows) {
            JsonNode payload = mapper.readTree(row.payload());
            readings.add(new PageRow(row.id(), row.deviceId(), row.ts(),
                    payload.path("metric01").asDouble(), payload.path("metric02").asDouble(),
                    payload.path("metric03").asDouble()));
        }
        ctx.render("page.jte", Map.of("readings", readings));
    }
}
