package iotbench.springwebflux;

import java.io.IOException;

import com.zaxxer.hikari.HikariDataSource;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.SingleThreadEventExecutor;
import iotbench.contract.FanOut;
import iotbench.contract.Signals;
import org.springframework.boot.autoconfigure.thread.Threading;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.http.client.ReactorResourceFactory;
import reactor.netty.resources.LoopResources;

/**
 * GET /signals on SIGNALS_PORT (docs/contract.md, "Signals"): the contract's {@link Signals}, on a server and
 * thread of its own, never Reactor Netty's. The pools: HikariCP, /fanout's, Reactor Netty's event loops
 * ({@code netty}), and the virtual threads' carriers when boundedElastic runs on virtual threads.
 */
@Configuration(proxyBeanMethods = false)
public class SignalsConfig {
    @Bean(destroyMethod = "close")
    Signals signals(HikariDataSource dataSource, FanOut fanOut, Environment environment, ReactorResourceFactory resources)
            throws IOException {
        Signals signals = Signals.fromEnv().hikari(dataSource).fanOut(fanOut);
        if (Threading.VIRTUAL.isActive(environment)) {
            signals.carriers();
        }
        // The server's loops: Boot's ReactorResourceFactory (Reactor Netty's global HttpResources), native (epoll)
        // where Reactor Netty runs native, as the server does. Size the loops (reactor.netty.ioWorkerCount), busy
        // the loops with tasks queued, waiting the tasks queued (taskQueue.size(), a count of the loop's queue).
        EventLoopGroup loops = resources.getLoopResources().onServer(LoopResources.DEFAULT_NATIVE);
        signals.pool("netty", "threads", () -> {
            int size = 0;
            int busy = 0;
            int waiting = 0;
            for (EventExecutor loop : loops) {
                size++;
                int pending = loop instanceof SingleThreadEventExecutor s ? s.pendingTasks() : 0;
                busy += pending > 0 ? 1 : 0;
                waiting += pending;
            }
            return new Signals.Pool(size, busy, waiting);
        });
        return signals.start();
    }
}
