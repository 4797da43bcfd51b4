package iotbench.springmvc;

import java.sql.SQLException;

import com.fasterxml.jackson.databind.JsonNode;
import iotbench.contract.Answers;
import iotbench.contract.Answers.Fast;
import iotbench.contract.Answers.Ingested;
import iotbench.contract.Answers.Realistic;
import iotbench.contract.Enrichment;
import iotbench.contract.ReadingStore;
import iotbench.contract.ReadingValidator;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** The body is taken as a String so that the payload is stored exactly as received. */
@RestController
class IngestController {
    private final ReadingValidator validator;
    private final ReadingStore store;

    IngestController(ReadingValidator validator, ReadingStore store) {
        this.validator = validator;
        this.store = store;
    }

    @PostMapping("/ingest")
    Ingested ingest(@RequestBody(required = false) String body) throws InterruptedException, SQLException {
        long start = System.nanoTime();
        JsonNode reading = validator.validate(body);
        long id = store.insert(reading.get("deviceId").textValue(), reading.get("timestamp").longValue(), body);
        Thread.sleep(50); // stands for a blocking I/O call; no DB connection is held here
        return new Ingested(id, Answers.elapsedMs(start));
    }

    @PostMapping("/ingest/fast")
    Fast fast(@RequestBody(required = false) String body) throws SQLException {
        JsonNode reading = validator.parse(body);
        long id = store.insert(reading.path("deviceId").asText(""), reading.path("timestamp").asLong(0), body);
        return new Fast(id);
    }

    @PostMapping("/ingest/realistic")
    Realistic realistic(@RequestBody(required = false) String body) throws SQLException {
        long start = System.nanoTime();
        JsonNode reading = validator.validate(body);
        long id = store.insert(reading.get("deviceId").textValue(), reading.get("timestamp").longValue(), body);
        return Realistic.of(id, start, Enrichment.of(reading));
    }

}
