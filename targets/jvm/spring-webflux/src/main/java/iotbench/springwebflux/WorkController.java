package iotbench.springwebflux;

import java.time.Duration;

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
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Every method returns a Mono, so WebFlux invokes it on the event loop in both variants (with virtual
 * threads on, Boot hands methods with a non-reactive return type to a virtual-thread executor instead).
 */
@RestController
class WorkController {
    static final Duration DOWNSTREAM_WAIT = Duration.ofMillis(20);

    private final ReadingValidator validator;
    private final ReadingStore store;
    private final Offload offload;
    private final FanOut fanOut;

    WorkController(ReadingValidator validator, ReadingStore store, Offload offload, FanOut fanOut) {
        this.validator = validator;
        this.store = store;
        this.offload = offload;
        this.fanOut = fanOut;
    }

    /** CPU-bound, on the event loop, as a reactive handler does it. */
    @GetMapping("/cpu")
    Mono<Cpu> cpu() {
        return Mono.just(Cpu.compute());
    }

    @GetMapping("/blocking")
    Mono<Waited> blocking(@RequestParam(name = "ms", required = false) String msParam) {
        long ms = ReadingValidator.blockingMs(msParam);
        return Mono.delay(Duration.ofMillis(ms)).thenReturn(new Waited(ms));
    }

    /** CPU-bound, on the event loop. */
    @PostMapping("/process-data")
    Mono<Fib> processData(@RequestBody(required = false) String body) {
        int k = validator.fibArgument(body);
        return Mono.just(new Fib(k, Work.fib(k)));
    }

    @GetMapping("/downstream")
    Mono<Ok> downstream() {
        return Mono.delay(DOWNSTREAM_WAIT).thenReturn(new Ok(true));
    }

    /**
     * The ten sub-tasks block threads of the fan-out pool; the event loop never waits: the answer comes back to it
     * when allOf completes.
     */
    @GetMapping("/fanout")
    Mono<FannedOut> fanout(ServerWebExchange exchange) {
        return offload.await(exchange, fanOut::start);
    }

    @GetMapping("/stats")
    Mono<Stats> stats(ServerWebExchange exchange) {
        return offload.call(exchange, store::highestId).map(Stats::new);
    }
}
