package iotbench.springmvc;

import java.io.IOException;

import com.zaxxer.hikari.HikariDataSource;
import iotbench.contract.FanOut;
import iotbench.contract.Signals;
import org.apache.tomcat.util.threads.ThreadPoolExecutor;
import org.springframework.boot.autoconfigure.thread.Threading;
import org.springframework.boot.web.context.WebServerInitializedEvent;
import org.springframework.boot.web.embedded.tomcat.TomcatWebServer;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * GET /signals on SIGNALS_PORT (docs/contract.md, "Signals"): the contract's {@link Signals}, on a server and
 * thread of its own, never Tomcat's. The pools: HikariCP, /fanout's, and the request threads: Tomcat's pool
 * with platform threads, the virtual threads' carriers with virtual ones.
 */
@Configuration(proxyBeanMethods = false)
public class SignalsConfig {
    @Bean(destroyMethod = "close")
    Signals signals(HikariDataSource dataSource, FanOut fanOut, Environment environment) throws IOException {
        Signals signals = Signals.fromEnv().hikari(dataSource).fanOut(fanOut);
        if (Threading.VIRTUAL.isActive(environment)) {
            signals.carriers();
        }
        return signals.start();
    }

    /**
     * Tomcat's request pool once the server exists: with platform threads the connector's executor is Tomcat's
     * ThreadPoolExecutor (size server.tomcat.threads.max, busy its threads running a request, waiting the
     * requests queued for one); with virtual threads it is a virtual-thread executor, no pool (carriers instead).
     */
    @Bean
    ApplicationListener<WebServerInitializedEvent> tomcatPool(Signals signals) {
        return event -> {
            if (event.getWebServer() instanceof TomcatWebServer tomcat
                    && tomcat.getTomcat().getConnector().getProtocolHandler().getExecutor() instanceof ThreadPoolExecutor pool) {
                signals.pool("tomcat", "threads", () -> new Signals.Pool(pool.getMaximumPoolSize(),
                        pool.getActiveCount(), pool.getQueue().size()));
            }
        };
    }
}
