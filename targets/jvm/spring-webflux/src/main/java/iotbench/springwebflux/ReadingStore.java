package iotbench.springwebflux;

import java.sql.PreparedStatement;
import java.util.List;
import java.util.Map;

import iotbench.contract.DatabaseSettings;
import iotbench.contract.Row;
import iotbench.contract.Sql;
import iotbench.contract.StandardReading;
import iotbench.contract.Summary;
import jakarta.annotation.PostConstruct;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.support.GeneratedKeyHolder;
import org.springframework.jdbc.support.KeyHolder;
import org.springframework.stereotype.Repository;

/**
 * The readings table through JdbcTemplate (H2 in memory or PostgreSQL, HikariCP: DatabaseConfig), the contract's SQL
 * and its bound (DatabaseSettings.evictedBy: an insert deletes the reading it pushes out of the store). No method
 * runs in a transaction: each statement borrows a connection from the pool and gives it back at once, so no
 * connection is held across a wait. Every method blocks (JDBC): handlers call them only through {@link Offload},
 * never on the event loop. The seeding runs on the main thread, before Reactor Netty starts listening.
 */
@Repository
public class ReadingStore {
    private final JdbcTemplate jdbc;
    private final StandardReading standard;
    private final DatabaseSettings settings;
    private final String[] idColumn;

    public ReadingStore(JdbcTemplate jdbc, StandardReading standard, DatabaseSettings settings) {
        this.jdbc = jdbc;
        this.standard = standard;
        this.settings = settings;
        this.idColumn = new String[] {settings.idColumn()};
    }

    /** Runs before the web server starts: creates the table and stores the 50 seed readings. */
    @PostConstruct
    void createAndSeed() {
        jdbc.execute(Sql.CREATE_TABLE);
        List<Object[]> seeds = standard.seeds().stream()
                .map(seed -> new Object[] {seed.deviceId(), seed.ts(), seed.payload()})
                .toList();
        jdbc.batchUpdate(Sql.INSERT, seeds);
        // Only a store that keeps fewer readings than the seeds drops some of them here.
        long upTo = settings.evictedBy(highestId());
        if (upTo > 0) {
            jdbc.update(Sql.DELETE_UP_TO, upTo);
        }
    }

    /**
     * Stores a reading and returns its id; on a bounded store, also deletes the reading it pushes out (a second
     * statement, and a second borrow of a pooled connection, as JdbcTemplate does every statement).
     */
    public long insert(String deviceId, long ts, String payload) {
        KeyHolder keys = new GeneratedKeyHolder();
        jdbc.update(con -> {
            PreparedStatement ps = con.prepareStatement(Sql.INSERT, idColumn);
            ps.setString(1, deviceId);
            ps.setLong(2, ts);
            ps.setString(3, payload);
            return ps;
        }, keys);
        Map<String, Object> generated = keys.getKeys();
        Object id = generated == null ? null : generated.values().iterator().next();
        if (!(id instanceof Number number)) {
            throw new IllegalStateException("insert returned no id");
        }
        long evicted = settings.evictedBy(number.longValue());
        if (evicted > 0) {
            jdbc.update(Sql.DELETE_ONE, evicted);
        }
        return number.longValue();
    }

    public List<Row> latest(int limit) {
        return jdbc.query(Sql.LATEST,
                (rs, i) -> new Row(rs.getLong(1), rs.getString(2), rs.getLong(3), rs.getString(4)), limit);
    }

    public List<Summary> latestSummaries(int limit) {
        return jdbc.query(Sql.LATEST_SUMMARIES,
                (rs, i) -> new Summary(rs.getLong(1), rs.getString(2), rs.getLong(3)), limit);
    }

    /** /stats: the readings stored since the table was created, seeds included (the highest id). */
    public long highestId() {
        Long n = jdbc.queryForObject(Sql.HIGHEST_ID, Long.class);
        return n == null ? 0 : n;
    }
}
