package iotbench.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class SignalsTest {
    private static final List<String> MEMBERS = List.of("schema", "runtime", "cpuMs", "gc", "jitMs", "safepoint",
            "eventLoop", "threads", "pools", "unavailable");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private Signals signals;

    @BeforeEach
    void start() throws Exception {
        signals = new Signals("127.0.0.1", 0).start();
    }

    @AfterEach
    void stop() {
        signals.close();
    }

    private JsonNode get() throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + signals.port() + "/signals")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        assertEquals("application/json", r.headers().firstValue("Content-Type").orElse(""));
        return JSON.readTree(r.body());
    }

    @Test
    void everyMemberIsPresentAndEachNullSaysWhy() throws Exception {
        JsonNode s = get();
        List<String> names = new ArrayList<>();
        s.fieldNames().forEachRemaining(names::add);
        assertEquals(MEMBERS, names);
        assertEquals(1, s.get("schema").asInt());
        assertEquals("jvm", s.get("runtime").asText());
        for (String m : MEMBERS) {
            if (s.get(m).isNull()) {
                assertTrue(s.get("unavailable").hasNonNull(m), m + " is null without a reason: " + s);
            }
        }
        assertTrue(s.get("eventLoop").isNull());
        assertTrue(s.get("cpuMs").isNumber(), s.toString());
        assertTrue(s.get("jitMs").isNumber(), s.toString());
        // Linux HotSpot, as every image builds and runs: the jvmstat counters are there.
        assertTrue(s.get("safepoint").isObject(), s.toString());
        assertTrue(s.get("safepoint").get("count").isIntegralNumber());
        assertTrue(s.get("safepoint").get("ms").isNumber());
        assertEquals(List.of("count", "pauseMs", "maxPauseMs"), fields(s.get("gc")));
        assertEquals(List.of("live", "blocked"), fields(s.get("threads")));
        assertTrue(s.get("threads").get("live").asInt() > 0);
        assertTrue(s.get("pools").isArray());
    }

    @Test
    void countersNeverGoBack() throws Exception {
        JsonNode before = get();
        System.gc(); // a pause at least, on any collector that has them
        byte[][] garbage = new byte[64][];
        for (int i = 0; i < 10_000; i++) {
            garbage[i % 64] = new byte[16 * 1024];
        }
        JsonNode after = get();
        for (String path : List.of("/cpuMs", "/jitMs", "/gc/count", "/gc/pauseMs", "/safepoint/count", "/safepoint/ms")) {
            assertTrue(after.at(path).asDouble() >= before.at(path).asDouble(),
                    path + " went back: " + before.at(path) + " -> " + after.at(path));
        }
        assertTrue(after.at("/gc/count").asLong() > before.at("/gc/count").asLong(), "System.gc() not counted: " + after);
        assertTrue(after.at("/safepoint/count").asLong() > before.at("/safepoint/count").asLong(),
                "a GC without a safepoint: " + after);
        assertTrue(after.at("/cpuMs").asDouble() > before.at("/cpuMs").asDouble());
    }

    @Test
    void maxPauseRestartsAtEachRead() throws Exception {
        // A pause no real collection of this JVM reaches, so that one on a busy build machine (a
        // young pause of 7 ms or more, with image builds beside it) cannot pass for the recorded one.
        long recorded = 1_000_000;
        get(); // takes whatever GC happened before
        signals.recordPause(recorded);
        signals.recordPause(3);
        assertEquals(recorded, get().at("/gc/maxPauseMs").asLong());
        long next = get().at("/gc/maxPauseMs").asLong();
        assertTrue(next < recorded, "not restarted: " + next);
    }

    @Test
    void theGcListenerRecordsARealPause() throws Exception {
        get();
        long count = get().at("/gc/count").asLong();
        System.gc();
        // The notification comes from the JVM's notification thread, shortly after the pause: up to 10 s
        // on a machine busy with other builds, as long only when it never comes.
        JsonNode s = get();
        for (int i = 0; i < 500 && s.at("/gc/count").asLong() == count; i++) {
            Thread.sleep(20);
            s = get();
        }
        assertTrue(s.at("/gc/count").asLong() > count, s.toString());
    }

    @Test
    void registeredPoolsShowUpAndAFailingOneSaysWhy() throws Exception {
        FanOut fanOut = new FanOut(3);
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl("jdbc:h2:mem:signals");
        config.setMaximumPoolSize(4);
        CountDownLatch release = new CountDownLatch(1);
        try (HikariDataSource ds = new HikariDataSource(config)) {
            signals.fanOut(fanOut).hikari(ds)
                    .pool("tomcat", "threads", () -> new Signals.Pool(200, 17, null))
                    .pool("broken", "threads", () -> {
                        throw new IllegalStateException("not started");
                    })
                    .unavailable("netty-call", "private to the engine");
            CountDownLatch running = new CountDownLatch(1);
            fanOut.executor().submit(() -> {
                running.countDown();
                return release.await(5, TimeUnit.SECONDS);
            });
            running.await();
            try (var held = ds.getConnection()) {
                JsonNode s = get();
                assertEquals("{\"name\":\"fanout\",\"kind\":\"threads\",\"size\":3,\"busy\":1,\"waiting\":0}",
                        pool(s, "fanout"));
                assertEquals("{\"name\":\"hikari\",\"kind\":\"connections\",\"size\":4,\"busy\":1,\"waiting\":0}",
                        pool(s, "hikari"));
                assertEquals("{\"name\":\"tomcat\",\"kind\":\"threads\",\"size\":200,\"busy\":17,\"waiting\":null}",
                        pool(s, "tomcat"));
                assertNull(pool(s, "broken"));
                assertEquals("not started", s.at("/unavailable/pools.broken").asText());
                assertEquals("private to the engine", s.at("/unavailable/pools.netty-call").asText());
            } finally {
                release.countDown();
            }
        }
    }

    @Test
    void carriersOnThisJdk() throws Exception {
        signals.carriers();
        JsonNode s = get();
        if (Runtime.version().feature() >= 24) {
            String carriers = pool(s, "carriers");
            assertTrue(carriers != null && carriers.startsWith("{\"name\":\"carriers\",\"kind\":\"threads\",\"size\":"),
                    s.toString());
        } else {
            assertTrue(s.at("/unavailable/pools.carriers").asText().contains("JDK 24"), s.toString());
        }
    }

    @Test
    void aThreadBlockedOnAMonitorIsCounted() throws Exception {
        Object lock = new Object();
        Thread waiter = new Thread(() -> {
            synchronized (lock) {
                lock.notifyAll();
            }
        });
        int before;
        synchronized (lock) {
            before = get().at("/threads/blocked").asInt();
            waiter.start();
            while (waiter.getState() != Thread.State.BLOCKED) {
                Thread.sleep(1);
            }
            assertTrue(get().at("/threads/blocked").asInt() > before);
        }
        waiter.join();
    }

    @Test
    void otherPathsAreNotFound() throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + signals.port() + "/health")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(404, r.statusCode());
    }

    @Test
    void unsetPortOpensNothing() throws Exception {
        assertNull(Signals.port(Map.of()));
        assertNull(Signals.port(Map.of("SIGNALS_PORT", "")));
        assertEquals(18081, Signals.port(Map.of("SIGNALS_PORT", "18081")));
        try (Signals none = new Signals("127.0.0.1", null).start()) {
            assertEquals(-1, none.port());
            assertFalse(none.read().contains("\"safepoint\":{"), "no server, no counters opened");
        }
    }

    @ParameterizedTest(name = "SIGNALS_PORT={0}")
    @MethodSource("badPorts")
    void rejectsPort(String value) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Signals.port(Map.of("SIGNALS_PORT", value)));
        assertEquals("SIGNALS_PORT=" + value + ": give the port of GET /signals, 1 to 65535", e.getMessage());
    }

    static Stream<String> badPorts() {
        return Stream.of("0", "-1", "65536", "http", "18081x");
    }

    private static List<String> fields(JsonNode n) {
        List<String> names = new ArrayList<>();
        n.fieldNames().forEachRemaining(names::add);
        return names;
    }

    private static String pool(JsonNode s, String name) {
        for (JsonNode p : s.get("pools")) {
            if (name.equals(p.get("name").asText())) {
                return p.toString();
            }
        }
        return null;
    }
}
