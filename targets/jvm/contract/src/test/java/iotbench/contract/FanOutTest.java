package iotbench.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class FanOutTest {
    static Stream<Arguments> pools() {
        return Stream.of(
                Arguments.of(Map.of(), 10),
                Arguments.of(Map.of("FANOUT_POOL", ""), 10),
                Arguments.of(Map.of("FANOUT_POOL", "1"), 1),
                Arguments.of(Map.of("FANOUT_POOL", "200"), 200));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("pools")
    void workers(Map<String, String> env, int want) {
        assertEquals(want, FanOut.workers(env));
    }

    @ParameterizedTest(name = "FANOUT_POOL={0}")
    @MethodSource("badPools")
    void rejectsPool(String value) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> FanOut.workers(Map.of("FANOUT_POOL", value)));
        assertEquals("FANOUT_POOL=" + value + ": give the fan-out pool's size, 1 to 1000", e.getMessage());
    }

    static Stream<String> badPools() {
        return Stream.of("0", "-3", "1001", "ten");
    }

    @Test
    void answersOnceEverySubTaskRan() {
        FanOut fanOut = new FanOut(2);
        assertEquals(new Answers.FannedOut(10, 500), fanOut.run());
        assertEquals(new Answers.FannedOut(10, 500), fanOut.start().join());
    }
}
