package iotbench.contract;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/** Parses a request body and applies the contract's validation, in the contract's order (Jackson). */
public final class ReadingValidator {
    public static final int FIELDS = 70;
    public static final int METRICS = 66;
    private static final String[] METRIC_NAMES = new String[METRICS];

    static {
        for (int i = 0; i < METRICS; i++) {
            METRIC_NAMES[i] = String.format("metric%02d", i + 1);
        }
    }

    private final ObjectMapper mapper;

    /** {@code mapper}: the app's own, the one that also writes its answers. */
    public ReadingValidator(ObjectMapper mapper) {
        this.mapper = mapper;
    }

    /** The name of metric {@code i} (0-based): metric01 ... metric66. */
    public static String metricName(int i) {
        return METRIC_NAMES[i];
    }

    /** Parses the body as JSON (any value); 400 when it does not parse. */
    public JsonNode parse(String body) {
        if (body == null || body.isBlank()) {
            throw new BadRequestException("body is not JSON");
        }
        try {
            JsonNode node = mapper.readTree(body);
            if (node == null || node.isMissingNode()) {
                throw new BadRequestException("body is not JSON");
            }
            return node;
        } catch (JsonProcessingException e) {
            throw new BadRequestException("body is not JSON");
        }
    }

    /** Full validation; returns the parsed reading. */
    public JsonNode validate(String body) {
        JsonNode node;
        try {
            node = parse(body);
        } catch (BadRequestException e) {
            throw new BadRequestException("body is not a JSON object");
        }
        if (!node.isObject()) {
            throw new BadRequestException("body is not a JSON object");
        }
        if (node.size() != FIELDS) {
            throw new BadRequestException("expected 70 fields, got " + node.size());
        }
        JsonNode deviceId = node.get("deviceId");
        if (deviceId == null || !deviceId.isTextual() || deviceId.textValue().isEmpty()
                || deviceId.textValue().codePointCount(0, deviceId.textValue().length()) > 64) {
            throw new BadRequestException("deviceId must be a string of 1 to 64 characters");
        }
        JsonNode timestamp = node.get("timestamp");
        if (timestamp == null || !timestamp.isIntegralNumber() || !timestamp.canConvertToLong()
                || timestamp.longValue() <= 0) {
            throw new BadRequestException("timestamp must be an integer > 0");
        }
        JsonNode type = node.get("type");
        if (type == null || !type.isTextual()) {
            throw new BadRequestException("type must be a string");
        }
        JsonNode firmware = node.get("firmware");
        if (firmware == null || !firmware.isTextual()) {
            throw new BadRequestException("firmware must be a string");
        }
        for (String name : METRIC_NAMES) {
            JsonNode metric = node.get(name);
            if (metric == null || !metric.isNumber()) {
                throw new BadRequestException(name + " must be a number");
            }
        }
        return node;
    }

    /** The body of POST /process-data: {"n":k}, k an integer from 1 to 40. */
    public int fibArgument(String body) {
        JsonNode n = parse(body).get("n");
        if (n == null || !n.isIntegralNumber() || !n.canConvertToInt() || n.intValue() < 1 || n.intValue() > 40) {
            throw new BadRequestException("n must be an integer from 1 to 40");
        }
        return n.intValue();
    }

    /** GET /blocking's {@code ms} parameter: default 500, an integer from 0 to 10000. */
    public static long blockingMs(String param) {
        long ms = 500;
        if (param != null) {
            try {
                ms = Long.parseLong(param.trim());
            } catch (NumberFormatException e) {
                throw new BadRequestException("ms must be an integer from 0 to 10000");
            }
        }
        if (ms < 0 || ms > 10_000) {
            throw new BadRequestException("ms must be an integer from 0 to 10000");
        }
        return ms;
    }
}
