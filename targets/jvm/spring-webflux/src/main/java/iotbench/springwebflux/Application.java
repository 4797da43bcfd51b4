package iotbench.springwebflux;

import com.fasterxml.jackson.databind.ObjectMapper;
import iotbench.contract.FanOut;
import iotbench.contract.Protocol;
import iotbench.contract.ReadingValidator;
import iotbench.contract.StandardReading;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

@SpringBootApplication
public class Application {
    /** Reactor Netty reads this once, when its {@code LoopResources} class is first loaded. */
    static final String IO_WORKER_COUNT = "reactor.netty.ioWorkerCount";
    /** Reactor Netty reads this once, when its {@code HttpTrafficHandler} class is first loaded. */
    static final String LAST_FLUSH_WHEN_NO_READ = "reactor.netty.http.server.lastFlushWhenNoRead";

    public static void main(String[] args) {
        // Both are set before any Reactor Netty class loads; an explicit -D wins (the Dockerfile passes none).

        // One event loop per CPU the JVM sees (cgroup-aware: cpuset and CPU quota). Reactor Netty's own
        // default is max(CPUs, 4): 4 loops time-sliced on 1 CPU.
        setDefault(IO_WORKER_COUNT, Integer.toString(Runtime.getRuntime().availableProcessors()));

        // Works around a Reactor Netty 1.2 keep-alive race (reactor/reactor-netty#4361, PR #4347): a request
        // that arrives on a kept-alive connection before the previous response's operations have terminated
        // is buffered as if pipelined, and after it is answered the connection may stop reading, so the
        // next request on it is never answered. Seen here on ~1% of back-to-back requests on one connection
        // (README.md, "Keep-alive"). With this switch the previous operations are terminated when the next
        // request arrives, so it is dispatched at once instead of buffered.
        setDefault(LAST_FLUSH_WHEN_NO_READ, "true");

        // Reactor Netty serves every protocol itself: TLS 1.3 on the JDK's SSLEngine, its own HTTP/2 (ALPN, or
        // h2c with prior knowledge).
        SpringApplication app = new SpringApplication(Application.class);
        app.setDefaultProperties(Protocol.fromEnv(Protocol.all()).springBootProperties());
        app.run(args);
    }

    /** The contract's validator on Boot's ObjectMapper, the one that also writes the answers. */
    @Bean
    ReadingValidator readingValidator(ObjectMapper mapper) {
        return new ReadingValidator(mapper);
    }

    @Bean
    StandardReading standardReading(ObjectMapper mapper) {
        return new StandardReading(mapper);
    }

    /** /fanout's executor, the process's one pool of FANOUT_POOL threads; its threads are daemons. */
    @Bean
    FanOut fanOut() {
        return FanOut.fromEnv();
    }

    private static void setDefault(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }
}
