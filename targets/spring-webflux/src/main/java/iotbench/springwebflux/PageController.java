package iotbench.springwebflux;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.reactive.result.view.Rendering;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * GET /page: the latest 50 readings rendered by Thymeleaf's reactive view resolver (templates/page.html).
 * The query runs through {@link Offload}; the payload parsing and the rendering on the event loop.
 */
@Controller
class PageController {
    static final int ROWS = 50;

    record PageRow(long id, String deviceId, long ts, double metric01, double metric02, double metric03) {
    }

    private final ReadingStore store;
    private final ObjectMapper mapper;
    private final Offload offload;

    PageController(ReadingStore store, ObjectMapper mapper, Offload offload) {
        this.store = store;
        this.mapper = mapper;
        this.offload = offload;
    }

    @GetMapping("/page")
    Mono<Rendering> page(ServerWebExchange exchange) {
        return offload.call(exchange, () -> store.latest(ROWS))
                .map(rows -> Rendering.view("page").modelAttribute("readings", toPageRows(rows)).build());
    }

    private List<PageRow> toPageRows(List<ReadingStore.Row> rows) {
        List<PageRow> readings = new ArrayList<>(rows.size());
        for (ReadingStore.Row row : rows) {
            JsonNode payload;
            try {
                payload = mapper.readTree(row.payload());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            readings.add(new PageRow(row.id(), row.deviceId(), row.ts(),
                    payload.path("metric01").asDouble(), payload.path("metric02").asDouble(),
                    payload.path("metric03").asDouble()));
        }
        return readings;
    }
}
