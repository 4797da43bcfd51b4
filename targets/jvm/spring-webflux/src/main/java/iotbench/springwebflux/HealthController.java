package iotbench.springwebflux;

import iotbench.contract.RuntimeInfo;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * {@code threadModel}: requests are always handled on Reactor Netty's event loops; "+virtual" when the
 * blocking scheduler (JDBC, file I/O) was found at startup to run its tasks on virtual threads.
 * Fields beyond the contract's: {@code eventLoops} (reactor.netty.ioWorkerCount), {@code handlerThread}
 * (the thread running this handler), {@code blockingThread} (the thread that ran the startup probe).
 */
@RestController
class HealthController {

    record Health(String status, String runtime, String framework, String threadModel,
                  int availableProcessors, long maxHeapBytes, String gc, Long jitCompileMs,
                  int eventLoops, String handlerThread, String blockingThread) {
    }

    private final Offload offload;
    private final int eventLoops;

    HealthController(Offload offload) {
        this.offload = offload;
        this.eventLoops = Integer.parseInt(System.getProperty(Application.IO_WORKER_COUNT, "-1"));
    }

    @GetMapping("/health")
    Mono<Health> health() {
        Runtime rt = Runtime.getRuntime();
        return Mono.just(new Health("UP", RuntimeInfo.runtime(), "spring-webflux",
                offload.virtual() ? "event-loop+virtual" : "event-loop",
                rt.availableProcessors(), rt.maxMemory(), RuntimeInfo.GC, RuntimeInfo.jitCompileMs(),
                eventLoops, Thread.currentThread().getName(), offload.blockingThread()));
    }
}
