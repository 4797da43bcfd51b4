package iotbench.springwebflux;

import com.fasterxml.jackson.databind.ObjectMapper;
import iotbench.contract.PageRow;
import iotbench.contract.ReadingStore;
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
        return offload.call(exchange, () -> store.latest(PageRow.ROWS))
                .map(rows -> Rendering.view("page").modelAttribute("readings", PageRow.of(rows, mapper)).build());
    }
}
