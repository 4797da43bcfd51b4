package iotbench.springmvc;

import com.fasterxml.jackson.databind.JsonNode;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

@RestController
class WorkController {

    record Cpu(double pi, long trace, int primes) {
    }

    record Waited(long waitedMs) {
    }

    record Fib(int n, long result) {
    }

    record Ok(boolean ok) {
    }

    record Stats(long rows) {
    }

    private final ReadingValidator validator;
    private final ReadingStore store;

    WorkController(ReadingValidator validator, ReadingStore store) {
        this.validator = validator;
        this.store = store;
    }

    @GetMapping("/cpu")
    Cpu cpu() {
        double pi = Work.monteCarloPi(1_000_000);
        double trace = Work.matrixTrace();
        int primes = Work.countPrimes(100_000);
        return new Cpu(pi, (long) trace, primes);
    }

    @GetMapping("/blocking")
    Waited blocking(@RequestParam(name = "ms", required = false) String msParam) throws InterruptedException {
        long ms = 500;
        if (msParam != null) {
            try {
                ms = Long.parseLong(msParam.trim());
            } catch (NumberFormatException e) {
                throw new BadRequestException("ms must be an integer from 0 to 10000");
            }
        }
        if (ms < 0 || ms > 10_000) {
            throw new BadRequestException("ms must be an integer from 0 to 10000");
        }
        Thread.sleep(ms);
        return new Waited(ms);
    }

    @PostMapping("/process-data")
    Fib processData(@RequestBody(required = false) String body) {
        JsonNode n = validator.parse(body).get("n");
        if (n == null || !n.isIntegralNumber() || !n.canConvertToInt() || n.intValue() < 1 || n.intValue() > 35) {
            throw new BadRequestException("n must be an integer from 1 to 35");
        }
        int k = n.intValue();
        return new Fib(k, Work.fib(k));
    }

    @GetMapping("/downstream")
    Ok downstream() throws InterruptedException {
        Thread.sleep(20);
        return new Ok(true);
    }

    @GetMapping("/stats")
    Stats stats() {
        return new Stats(store.count());
    }
}
