package iotbench.springmvc;

import java.sql.SQLException;

import com.fasterxml.jackson.databind.ObjectMapper;
import iotbench.contract.PageRow;
import iotbench.contract.ReadingStore;
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
    String page(Model model) throws SQLException {
        model.addAttribute("readings", PageRow.of(store.latest(PageRow.ROWS), mapper));
        return "page";
    }
}
