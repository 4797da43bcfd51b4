package iotbench.springmvc;

import java.sql.SQLException;

import iotbench.contract.Answers.Cpu;
import iotbench.contract.Answers.FannedOut;
import iotbench.contract.Answers.Fib;
import iotbench.contract.Answers.Ok;
import iotbench.contract.Answers.Stats;
import iotbench.contract.Answers.Waited;
import iotbench.contract.FanOut;
import iotbench.contract.ReadingStore;
import iotbench.contract.ReadingValidator;
import iotbench.contract.Work;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

@RestController
class WorkController {
    private final ReadingValidator validator;
    private final ReadingStore store;
    private final FanOut fanOut;

    WorkController(ReadingValidator validator, ReadingStore store, FanOut fanOut) {
        this.validator = validator;
        this.store = store;
        this.fanOut = fanOut;
    }

    @GetMapping("/cpu")
    Cpu cpu() {
        return Cpu.compute();
    }

    @GetMapping("/blocking")
    Waited blocking(@RequestParam(name = "ms", required = false) String msParam) throws InterruptedException {
        long ms = ReadingValidator.blockingMs(msParam);
        Thread.sleep(ms);
        return new Waited(ms);
    }

    @PostMapping("/process-data")
    Fib processData(@RequestBody(required = false) String body) {
        int k = validator.fibArgument(body);
        return new Fib(k, Work.fib(k));
    }

    @GetMapping("/downstream")
    Ok downstream() throws InterruptedException {
        Thread.sleep(20);
        return new Ok(true);
    }

    /** The request's thread (platform or virtual) waits for the ten sub-tasks on the fan-out pool. */
    @GetMapping("/fanout")
    FannedOut fanout() {
        return fanOut.run();
    }

    @GetMapping("/stats")
    Stats stats() throws SQLException {
        return new Stats(store.highestId());
    }
}
