package iotbench.contract;

/** A stored reading without its payload: /enterprise's query, written to its temp file as JSON. */
public record Summary(long id, String deviceId, long ts) {
}
