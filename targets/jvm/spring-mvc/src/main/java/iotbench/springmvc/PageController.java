package iotbench.springmvc;

import com.fasterxml.jackson.databind.ObjectMapper;
import iotbench.contract.PageRow;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;

/** GET /page: the latest 50 readings rendered by Thymeleaf (templates/page.html). */
@Controller
class PageController {
    private final ReadingStore store;
    private final ObjectMapper mapper;

    PageController(ReadingStore store, ObjectMapper mapper) {
        this.store = store;
        this.mapper = mapper;
    }

    @GetMapping("/page")
    String page(Model model) {
        model.addAttribute("readings", PageRow.of(store.latest(PageRow.ROWS), mapper));
        return "page";
    }
}
