package iotbench.contract;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/** The framework-free steps of GET /enterprise (docs/contract.md); the apps run them in the contract's order. */
public final class Enterprise {
    public static final String DEVICE_ID = "enterprise";
    public static final int ROWS = 10;
    public static final int FILE_BYTES = 4096;
    public static final int CACHE_ENTRIES = 1000;

    private Enterprise() {
    }

    /** Step 3: {@code json} (step 2's rows) space-padded to 4096 bytes, written to a new temp file, read back, deleted. */
    public static int fileRoundTrip(byte[] json) throws IOException {
        if (json.length > FILE_BYTES) {
            throw new IllegalStateException("rows JSON exceeds " + FILE_BYTES + " bytes");
        }
        byte[] padded = Arrays.copyOf(json, FILE_BYTES);
        Arrays.fill(padded, json.length, FILE_BYTES, (byte) ' ');
        Path file = Files.createTempFile("iotbench-", ".json");
        try {
            Files.write(file, padded);
            return Files.readAllBytes(file).length;
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /** Step 5's key. */
    public static String cacheKey(long id) {
        return "device:" + (id % 100);
    }
}
