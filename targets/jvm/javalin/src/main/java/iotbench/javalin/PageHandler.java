package iotbench.javalin;

import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.javalin.http.Context;
import iotbench.contract.PageRow;
import iotbench.contract.ReadingStore;

/** GET /page: the latest 50 readings rendered by the precompiled jte template src/main/jte/page.jte. */
final class PageHandler {
    private final ReadingStore store;
    private final ObjectMapper mapper;

    PageHandler(ReadingStore store, ObjectMapper mapper) {
        this.store = store;
        this.mapper = mapper;
    }

    void page(Context ctx) throws Exception {
        ctx.render("page.jte", Map.of("readings", PageRow.of(store.latest(PageRow.ROWS), mapper)));
    }
}
