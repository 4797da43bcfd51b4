package iotbench.springmvc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;

/** GET /page: the latest 50 readings rendered by Thymeleaf (templates/page.html). */
@Controller
class PageController {
    static final int ROWS = 50;

    record PageRow(long id, String deviceId, long ts, double metric01, double metric02, double metric03) {
    }

    private final ReadingStore store;
    private final ObjectMapper mapper;

    PageController(ReadingStore store, ObjectMapper mapper) {
        this.store = store;
        this.mapper = mapper;
    }

    @GetMapping("/page")
    String page(Model model) {
        List<ReadingStore.Row> rows = store.latest(ROWS);
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
        model.addAttribute("readings", readings);
        return "page";
    }
}
