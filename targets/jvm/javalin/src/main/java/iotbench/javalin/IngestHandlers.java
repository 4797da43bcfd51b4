package iotbench.javalin;

import com.fasterxml.jackson.databind.JsonNode;
import io.javalin.http.Context;
import iotbench.contract.Answers;
import iotbench.contract.Answers.Fast;
import iotbench.contract.Answers.Ingested;
import iotbench.contract.Answers.Realistic;
import iotbench.contract.Enrichment;
import iotbench.contract.ReadingStore;
import iotbench.contract.ReadingValidator;

/** POST /ingest, /ingest/fast, /ingest/realistic. The body is read as a String and stored as received. */
final class IngestHandlers {
    private final ReadingValidator validator;
    private final ReadingStore store;

    IngestHandlers(ReadingValidator validator, ReadingStore store) {
        this.validator = validator;
        this.store = store;
    }

    void ingest(Context ctx) throws Exception {
        long start = System.nanoTime();
        String body = ctx.body();
        JsonNode reading = validator.validate(body);
        long id = store.insert(reading.get("deviceId").textValue(), reading.get("timestamp").longValue(), body);
        Thread.sleep(50); // stands for a blocking I/O call; no DB connection is held here
        ctx.json(new Ingested(id, Answers.elapsedMs(start)));
    }

    void fast(Context ctx) throws Exception {
        String body = ctx.body();
        JsonNode reading = validator.parse(body);
        long id = store.insert(reading.path("deviceId").asText(""), reading.path("timestamp").asLong(0), body);
        ctx.json(new Fast(id));
    }

    void realistic(Context ctx) throws Exception {
        long start = System.nanoTime();
        String body = ctx.body();
        JsonNode reading = validator.validate(body);
        long id = store.insert(reading.get("deviceId").textValue(), reading.get("timestamp").longValue(), body);

        ctx.json(Realistic.of(id, start, Enrichment.of(reading)));
    }

}
