package iotbench.javalin;

/** One row of /page; public because the generated template class (another package) reads it. */
public record PageRow(long id, String deviceId, long ts, double metric01, double metric02, double metric03) {
}
