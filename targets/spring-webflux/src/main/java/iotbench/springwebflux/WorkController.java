package iotbench.springwebflux;

import java.time.Duration;

import com.fasterxml.jackson.databind.JsonNode;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Every method returns a Mono, so WebFlux invokes it on the event loop in both variants (with virtual
 * threads on, Boot hands methods with a non-reactive return type to a virtual-thread executor instead).
 */
@RestController
class WorkController {
    static final Duration DOWNSTREAM_WAIT = Duration.ofMillis(20);

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
    private final Offload offload;

    WorkController(ReadingValidator validator, ReadingStore store, Offload offload) {
        this.validator = validator;
        this.store = store;
        this.offload = offload;
    }

    /** CPU-bound, on the event loop, as a reactive handler does it. */
    @GetMapping("/cpu")
    Mono<Cpu> cpu() {
        double pi = Work.monteCarloPi(1_000_000);
        double trace = Work.matrixTrace();
        int primes = Work.countPrimes(100_000);
        return Mono.just(new Cpu(pi, (long) trace, primes));
    }

    @GetMapping("/blocking")
    Mono<Waited> blocking(@RequestParam(name = "ms", required = false) String msParam) {
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
        long waited = ms;
        return Mono.delay(Duration.ofMillis(ms)).thenReturn(new Waited(waited));
    }

    /** CPU-bound, on the event loop. */
    @PostMapping("/process-data")
    Mono<Fib> processData(@RequestBody(required = false) String body) {
        JsonNode n = validator.parse(body).get("n");
        if (n == null || !n.isIntegralNumber() || !n.canConvertToInt() || n.intValue() < 1 || n.intValue() > 35) {
            throw new BadRequestException("n must be an integer from 1 to 35");
        }
        int k = n.intValue();
        return Mono.just(new Fib(k, Work.fib(k)));
    }

    @GetMapping("/downstream")
    Mono<Ok> downstream() {
        return Mono.delay(DOWNSTREAM_WAIT).thenReturn(new Ok(true));
    }

    @GetMapping("/stats")
    Mono<Stats> stats(ServerWebExchange exchange) {
        return offload.call(exchange, store::count).map(Stats::new);
    }
}
