package iotbench.springmvc;

import java.net.http.HttpClient;

import org.springframework.boot.http.client.ClientHttpRequestFactoryBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The auto-configured {@code RestClient.Builder} uses this factory builder: the JDK HttpClient, pinned to
 * HTTP/1.1 so that it does not send an {@code Upgrade: h2c} request on each new connection. Timeouts
 * come from {@code spring.http.client.*} in application.properties.
 */
@Configuration(proxyBeanMethods = false)
class HttpClientConfig {
    @Bean
    ClientHttpRequestFactoryBuilder<?> clientHttpRequestFactoryBuilder() {
        return ClientHttpRequestFactoryBuilder.jdk()
                .withHttpClientCustomizer(builder -> builder.version(HttpClient.Version.HTTP_1_1));
    }
}
