package iotbench.springmvc;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.stream.Collectors;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

@RestController
class HealthController {

    record Health(String status, String runtime, String framework, String threadModel,
                  int availableProcessors, long maxHeapBytes, String gc) {
    }

    private static final String GC = ManagementFactory.getGarbageCollectorMXBeans().stream()
            .map(GarbageCollectorMXBean::getName)
            .collect(Collectors.joining(","));

    @GetMapping("/health")
    Health health() {
        Runtime rt = Runtime.getRuntime();
        return new Health("UP", "java " + Runtime.version(), "spring-mvc",
                Thread.currentThread().isVirtual() ? "virtual" : "platform",
                rt.availableProcessors(), rt.maxMemory(), GC);
    }
}
