package iotbench.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class DatabaseSettingsTest {
    private static final String PG = "postgresql://iot:pw@127.0.0.1:18081/iot";

    static Stream<Arguments> keeps() {
        return Stream.of(
                // READINGS_KEEP (null: unset), DATABASE_URL, the keep in force, evictedBy(ids 50_001, 10)
                Arguments.of(null, null, 1_000L, 49_001L, 0L),
                Arguments.of("", null, 1_000L, 49_001L, 0L),
                Arguments.of("0", null, 0L, 0L, 0L),
                Arguments.of("5", null, 5L, 49_996L, 5L),
                Arguments.of("10", null, 10L, 49_991L, 0L),
                Arguments.of("5", PG, 0L, 0L, 0L),
                Arguments.of(null, PG, 0L, 0L, 0L));
    }

    @ParameterizedTest(name = "READINGS_KEEP={0}, DATABASE_URL={1}")
    @MethodSource("keeps")
    void keep(String keep, String url, long wantKeep, long evictedByLarge, long evictedBy10) {
        Map<String, String> env = new HashMap<>();
        if (keep != null) {
            env.put("READINGS_KEEP", keep);
        }
        if (url != null) {
            env.put("DATABASE_URL", url);
        }
        DatabaseSettings s = DatabaseSettings.from(env);
        assertEquals(wantKeep, s.keep());
        assertEquals(evictedByLarge, s.evictedBy(50_001));
        assertEquals(evictedBy10, s.evictedBy(10));
    }

    static Stream<Arguments> badKeeps() {
        return Stream.of(
                Arguments.of("-1", "READINGS_KEEP=-1: give how many readings the embedded store keeps, 0 (all) or more"),
                Arguments.of("lots", "READINGS_KEEP=lots: give how many readings the embedded store keeps, 0 (all) or more"));
    }

    @ParameterizedTest(name = "READINGS_KEEP={0}")
    @MethodSource("badKeeps")
    void rejectsKeep(String keep, String want) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> DatabaseSettings.from(Map.of("READINGS_KEEP", keep)));
        assertEquals(want, e.getMessage());
    }
}
