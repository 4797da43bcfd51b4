package iotbench.springmvc;

import iotbench.contract.RuntimeInfo;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

@RestController
class HealthController {

    record Health(String status, String runtime, String framework, String threadModel,
                  int availableProcessors, long maxHeapBytes, String gc, Long jitCompileMs) {
    }

    @GetMapping("/health")
    Health health() {
        Runtime rt = Runtime.getRuntime();
        return new Health("UP", RuntimeInfo.runtime(), "spring-mvc",
                Thread.currentThread().isVirtual() ? "virtual" : "platform",
                rt.availableProcessors(), rt.maxMemory(), RuntimeInfo.GC, RuntimeInfo.jitCompileMs());
    }
}
