package iotbench.springmvc;

import com.fasterxml.jackson.databind.ObjectMapper;
import iotbench.contract.FanOut;
import iotbench.contract.ReadingValidator;
import iotbench.contract.StandardReading;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

@SpringBootApplication
public class Application {
    public static void main(String[] args) {
        SpringApplication.run(Application.class, args);
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
