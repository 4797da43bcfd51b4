package iotbench.contract;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * POST /ingest/realistic's enrichment: mean, min, max and population standard deviation of metric01 ...
 * metric66, then monteCarloPi(10000).
 */
public record Enrichment(double mean, double min, double max, double stddev, double pi) {

    /** {@code values}: the 66 metrics in order (an app reads them with its own JSON library). */
    public static Enrichment of(double[] values) {
        double sum = 0;
        double min = Double.POSITIVE_INFINITY;
        double max = Double.NEGATIVE_INFINITY;
        for (double v : values) {
            sum += v;
            min = Math.min(min, v);
            max = Math.max(max, v);
        }
        double mean = sum / values.length;
        double squares = 0;
        for (double v : values) {
            squares += (v - mean) * (v - mean);
        }
        double stddev = Math.sqrt(squares / values.length); // population standard deviation
        return new Enrichment(mean, min, max, stddev, Work.monteCarloPi(10_000));
    }

    /** The metrics of a reading {@link ReadingValidator#validate} accepted. */
    public static Enrichment of(JsonNode reading) {
        double[] values = new double[ReadingValidator.METRICS];
        for (int i = 0; i < values.length; i++) {
            values[i] = reading.get(ReadingValidator.metricName(i)).doubleValue();
        }
        return of(values);
    }
}
