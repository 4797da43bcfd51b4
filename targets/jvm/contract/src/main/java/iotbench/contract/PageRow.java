package iotbench.contract;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/** One row of /page; public because templates (jte's generated classes, Thymeleaf) read it. */
public record PageRow(long id, String deviceId, long ts, double metric01, double metric02, double metric03) {
    public static final int ROWS = 50;

    /** The rows with metric01..03 read from each stored payload, parsed by {@code mapper}. */
    public static List<PageRow> of(List<Row> rows, ObjectMapper mapper) {
        List<PageRow> readings = new ArrayList<>(rows.size());
        for (Row row : rows) {
            JsonNode payload;
            try {
                payload = mapper.readTree(row.payload());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            readings.add(new PageRow(row.id(), row.deviceId(), row.ts(), payload.path("metric01").asDouble(),
                    payload.path("metric02").asDouble(), payload.path("metric03").asDouble()));
        }
        return readings;
    }
}
