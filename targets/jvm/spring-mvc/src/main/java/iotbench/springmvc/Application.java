package iotbench.springmvc;

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
    public static void main(String[] args) {
        // Tomcat serves every protocol itself: JSSE for TLS 1.3, its own HTTP/2 (ALPN, or h2c).
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
}
