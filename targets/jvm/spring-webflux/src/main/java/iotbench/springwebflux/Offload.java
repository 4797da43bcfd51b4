package iotbench.springwebflux;

import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

import io.netty.channel.EventLoop;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.http.server.HttpServerRequest;

/**
 * Runs blocking work (JDBC, file I/O) off the event loop and hands its result back to the request's
 * event loop.
 *
 * <p>The blocking side is {@link Schedulers#boundedElastic()}, the scheduler Reactor provides for this. With
 * {@code spring.threads.virtual.enabled=true} (and Java 21+), Spring Boot's {@code ReactorEnvironmentPostProcessor}
 * sets {@code reactor.schedulers.defaultBoundedElasticOnVirtualThreads=true} before anything touches Reactor,
 * and the same {@code Schedulers.boundedElastic()} then starts one virtual thread per task
 * ({@code loomBoundedElastic-N}) instead of reusing platform threads ({@code boundedElastic-N}). Either way at
 * most 10 x CPUs tasks run at once (more wait in its queue). {@link #virtual()} reports which one runs, probed
 * at startup.
 *
 * <p>The way back: without it, whatever follows the blocking call in the chain (the enrichment and
 * Monte Carlo of /ingest/realistic, the payload parsing and Thymeleaf rendering of /page) would run on the
 * blocking thread. {@code publishOn} the channel's own Netty event loop keeps all CPU work on the event
 * loop, so the two variants of this target differ only in the thread that runs the blocking call.
 */
@Component
public class Offload {
    private final Scheduler blocking = Schedulers.boundedElastic();
    private final Map<Executor, Scheduler> loops = new ConcurrentHashMap<>();
    private final boolean virtual;
    private final String blockingThread;

    public Offload() {
        Thread probe = Mono.fromCallable(Thread::currentThread).subscribeOn(blocking).block();
        if (probe == null) {
            throw new IllegalStateException("blocking scheduler did not run the probe");
        }
        this.virtual = probe.isVirtual();
        this.blockingThread = probe.getName();
    }

    /**
     * {@code work} on the blocking scheduler; its value (or error) is delivered on the event loop of the
     * exchange's connection. {@code work} must not return null.
     */
    public <T> Mono<T> call(ServerWebExchange exchange, Callable<T> work) {
        Mono<T> result = Mono.fromCallable(work).subscribeOn(blocking);
        Scheduler loop = eventLoopOf(exchange);
        return loop == null ? result : result.publishOn(loop);
    }

    /**
     * The future {@code start} returns, started at subscription, without blocking any thread while it runs; its
     * value (or error) is delivered on the event loop of the exchange's connection, as {@link #call}'s.
     */
    public <T> Mono<T> await(ServerWebExchange exchange, Supplier<CompletableFuture<T>> start) {
        Mono<T> result = Mono.fromFuture(start);
        Scheduler loop = eventLoopOf(exchange);
        return loop == null ? result : result.publishOn(loop);
    }

    /** True when the blocking scheduler runs its tasks on virtual threads. */
    public boolean virtual() {
        return virtual;
    }

    /** The name of the thread that ran the startup probe, e.g. boundedElastic-1 or loomBoundedElastic-1. */
    public String blockingThread() {
        return blockingThread;
    }

    private Scheduler eventLoopOf(ServerWebExchange exchange) {
        Object nativeRequest = ServerHttpRequestDecorator.getNativeRequest(exchange.getRequest());
        if (!(nativeRequest instanceof HttpServerRequest request)) {
            return null;
        }
        EventLoop[] loop = new EventLoop[1];
        request.withConnection(connection -> loop[0] = connection.channel().eventLoop());
        if (loop[0] == null) {
            return null;
        }
        // One non-owning Scheduler per event loop (a handful: reactor.netty.ioWorkerCount of them).
        return loops.computeIfAbsent(loop[0], Schedulers::fromExecutor);
    }
}
