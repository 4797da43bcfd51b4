package iotbench.contract;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Which store an app uses, read from the environment (docs/contract.md, "Process"): {@code DATABASE_URL}
 * ({@code postgresql://user:password@host:port/database}) for PostgreSQL, unset for H2 in memory; and
 * {@code DB_POOL_SIZE}, the pool's fixed size (10). Every app gives these to its HikariCP pool, so that
 * every JVM target talks to either store through the same pool and the same SQL.
 */
public record DatabaseSettings(String jdbcUrl, String user, String password, int poolSize, boolean postgres) {
    public static final String H2_URL = "jdbc:h2:mem:iot;DB_CLOSE_DELAY=-1";
    public static final int DEFAULT_POOL_SIZE = 10;

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
        String url = env.get("DATABASE_URL");
        if (url == null || url.isEmpty()) {
            return new DatabaseSettings(H2_URL, "sa", "", pool, false);
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
        return new DatabaseSettings(jdbc, user, password, pool, true);
    }

    /**
     * The generated key's column as the driver must be asked for it: PostgreSQL's JDBC driver quotes the name
     * (RETURNING "id"), H2 stores unquoted names upper-case.
     */
    public String idColumn() {
        return postgres ? "id" : "ID";
    }

    /** What /health and the startup line call the store. */
    public String kind() {
        return postgres ? "postgresql" : "h2";
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }
}
