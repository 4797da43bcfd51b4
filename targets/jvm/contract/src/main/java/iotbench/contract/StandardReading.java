package iotbench.contract;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The standard reading (payloads/iot-reading.json, a class-path resource of this module) and what the
 * contract derives from it: the 50 seed rows and the reading /enterprise stores. Used at startup only.
 */
public final class StandardReading {
    public static final int SEEDS = 50;
    public static final long SEED_TIMESTAMP = 1763812800000L;

    /** One row to insert: the serialized reading and the two columns taken from it. */
    public record Seed(String deviceId, long ts, String payload) {
    }

    private final ObjectMapper mapper;
    private final ObjectNode reading;

    public StandardReading(ObjectMapper mapper) {
        this.mapper = mapper;
        try (InputStream in = StandardReading.class.getResourceAsStream("/iot-reading.json")) {
            if (in == null) {
                throw new IllegalStateException("iot-reading.json is missing from the class path (contract module)");
            }
            this.reading = (ObjectNode) mapper.readTree(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The reading's own timestamp. */
    public long timestamp() {
        return reading.get("timestamp").longValue();
    }

    /** The reading with {@code deviceId} replaced, serialized. */
    public String withDevice(String deviceId) {
        ObjectNode copy = reading.deepCopy();
        copy.put("deviceId", deviceId);
        return write(copy);
    }

    /** deviceId seed-00 ... seed-49, timestamp SEED_TIMESTAMP + i. */
    public List<Seed> seeds() {
        List<Seed> seeds = new ArrayList<>(SEEDS);
        for (int i = 0; i < SEEDS; i++) {
            String deviceId = String.format("seed-%02d", i);
            long ts = SEED_TIMESTAMP + i;
            ObjectNode seed = reading.deepCopy();
            seed.put("deviceId", deviceId);
            seed.put("timestamp", ts);
            seeds.add(new Seed(deviceId, ts, write(seed)));
        }
        return seeds;
    }

    private String write(ObjectNode node) {
        try {
            return mapper.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }
}
