package iotbench.springwebflux;

import java.time.Duration;

import org.springframework.boot.http.client.reactive.ClientHttpConnectorBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

/**
 * The connector under the auto-configured {@code WebClient.Builder}: Reactor Netty's HttpClient (HTTP/1.1,
 * the default), on the same global event loops as the server, with its own connection pool.
 *
 * <p>Why a pool of our own: Reactor Netty's default pool allows max(CPUs, 8) x 2 = 16 connections per host
 * and 32 waiting acquires; the 49th concurrent /enterprise call fails at once with
 * PoolAcquirePendingLimitException, and throughput to a 20 ms downstream is capped near 800/s by the pool,
 * not by the framework. The other targets' clients (the JDK HttpClient of spring-mvc, undici in fastify) do
 * not cap connections per host, so this one is sized far above any in-flight count a run produces.
 * Connect and read timeouts come from {@code spring.http.reactiveclient.*} (application.properties).
 */
@Configuration(proxyBeanMethods = false)
class HttpClientConfig {
    static final int DOWNSTREAM_MAX_CONNECTIONS = 10_000;

    @Bean(destroyMethod = "dispose")
    ConnectionProvider downstreamConnections() {
        return ConnectionProvider.builder("downstream")
                .maxConnections(DOWNSTREAM_MAX_CONNECTIONS)
                .pendingAcquireMaxCount(-1)
                .pendingAcquireTimeout(Duration.ofSeconds(15))
                .build();
    }

    @Bean
    ClientHttpConnectorBuilder<?> clientHttpConnectorBuilder(ConnectionProvider downstreamConnections) {
        // HttpClient.create(provider) runs on Reactor Netty's global LoopResources: the server's event loops.
        return ClientHttpConnectorBuilder.reactor()
                .withHttpClientFactory(() -> HttpClient.create(downstreamConnections));
    }
}
