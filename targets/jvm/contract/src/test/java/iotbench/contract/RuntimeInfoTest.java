package iotbench.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RuntimeInfoTest {
    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "'C2 CompilerThre\n', true",
            "'C1 CompilerThre\n', true",
            "'JVMCI CompilerT\n', true",
            "'http-nio-8080-e\n', false",
            "'VM Thread\n', false"})
    void compilerThreads(String comm, boolean want) {
        assertEquals(want, RuntimeInfo.isCompiler(comm));
    }

    @Test
    void startTimeIsField22() {
        assertEquals("412", RuntimeInfo.startTime("118 (C2 CompilerThre) S 1 1 1 0 -1 1077936192 0 0 0 0 3312 41 0 0 20 0 28 0 412 0 0\n"));
        // A name may hold a parenthesis: fields are counted after the last one.
        assertEquals("7", RuntimeInfo.startTime("131 (a) (b) S 1 1 1 0 -1 0 0 0 0 0 5 6 0 0 20 0 28 0 7 0\n"));
        assertThrows(IllegalArgumentException.class, () -> RuntimeInfo.startTime("118 (C2 CompilerThre) S 1 1\n"));
    }

    @Test
    void busyIsTimeOnACpuPlusTimeWaitingForOne() {
        assertEquals(483_651_641L, RuntimeInfo.busyNs("317489364 166162277 430\n"));
        assertThrows(IllegalArgumentException.class, () -> RuntimeInfo.busyNs("317489364\n"));
    }

    @Test
    void theCompilersTimeIsReadAndNeverShrinks() {
        // By the time tests run, this JVM's compilers have compiled the test framework: on Linux they have
        // been busy, and their time cannot go back.
        Long first = RuntimeInfo.jitCompileMs();
        assertNotNull(first, "no /proc/self/task schedstat on this Linux JVM");
        assertTrue(first > 0, "the compiler threads were never busy: " + first);
        assertTrue(RuntimeInfo.jitCompileMs() >= first, "the compilers' time went back");
    }
}
