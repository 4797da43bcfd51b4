package iotbench.contract;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Which store an app uses, read from the environment (docs/contract.md, "Process"): {@code DATABASE_URL}
 * ({@code postgresql://user:password@host:port/database}) for PostgreSQL, unset for H2 in memory; and
 * {@code DB_POOL_SIZE}, the pool's fixed size (10); {@code READINGS_KEEP}, how many readings the embedded
 * store keeps (1,000; 0 keeps all). Every app gives these to its HikariCP pool and its store, so that every
 * JVM target talks to either store through the same pool, the same SQL and the same bound.
 *
 * @param keep the readings the store keeps, 0 for all: always 0 on PostgreSQL, which keeps every reading in
 *             its own container rather than in the target's memory
 */
public record DatabaseSettings(String jdbcUrl, String user, String password, int poolSize, boolean postgres,
                               long keep) {
    public static final String H2_URL = "jdbc:h2:mem:iot;DB_CLOSE_DELAY=-1";
    public static final int DEFAULT_POOL_SIZE = 10;
    public static final long DEFAULT_KEEP = 1_000;

    /** The settings of this process's environment; a malformed value fails startup with what to fix. */
    public static DatabaseSettings fromEnv() {
        return from(System.getenv());
    }

    static DatabaseSettings from(Map<String, String> env) {
        int pool = DEFAULT_POOL_SIZE;
        String size = env.get("DB_POOL_SIZE");
        if (size != null && !size.isEmpty()) {
            try {
                pool = Integer.parseInt(size);
            } catch (NumberFormatException e) {
                pool = 0;
            }
            if (pool < 1 || pool > 1000) {
                throw new IllegalArgumentException("DB_POOL_SIZE=" + size + ": give the pool's size, 1 to 1000");
            }
        }
        long keep = DEFAULT_KEEP;
        String keepValue = env.get("READINGS_KEEP");
        if (keepValue != null && !keepValue.isEmpty()) {
            try {
                keep = Long.parseLong(keepValue);
            } catch (NumberFormatException e) {
                keep = -1;
            }
            if (keep < 0) {
                throw new IllegalArgumentException("READINGS_KEEP=" + keepValue
                        + ": give how many readings the embedded store keeps, 0 (all) or more");
            }
        }
        String url = env.get("DATABASE_URL");
        if (url == null || url.isEmpty()) {
            return new DatabaseSettings(H2_URL, "sa", "", pool, false, keep);
        }
        URI u = URI.create(url);
        if (!"postgresql".equals(u.getScheme()) && !"postgres".equals(u.getScheme())
                || u.getHost() == null || u.getRawUserInfo() == null || u.getPath() == null || u.getPath().length() < 2) {
            throw new IllegalArgumentException("DATABASE_URL: give postgresql://user:password@host:port/database");
        }
        String[] userInfo = u.getRawUserInfo().split(":", 2);
        String user = decode(userInfo[0]);
        String password = userInfo.length > 1 ? decode(userInfo[1]) : "";
        int port = u.getPort() > 0 ? u.getPort() : 5432;
        String jdbc = "jdbc:postgresql://" + u.getHost() + ":" + port + u.getPath();
        return new DatabaseSettings(jdbc, user, password, pool, true, 0);
    }

    /**
     * The generated key's column as the driver must be asked for it: PostgreSQL's JDBC driver quotes the name
     * (RETURNING "id"), H2 stores unquoted names upper-case.
     */
    public String idColumn() {
        return postgres ? "id" : "ID";
    }

    /**
     * The reading that storing reading {@code id} pushes out of the bounded store, {@code id - keep}; 0 when
     * none does (the store keeps all, or holds fewer than {@code keep}). Ids are the store's counter, never
     * reused, so this is the oldest reading kept.
     */
    public long evictedBy(long id) {
        return keep > 0 && id > keep ? id - keep : 0;
    }

    /** What /health and the startup line call the store. */
    public String kind() {
        return postgres ? "postgresql" : "h2";
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }
}
