package iotbench.contract;

/** A stored reading: /page's query. */
public record Row(long id, String deviceId, long ts, String payload) {
}
