package iotbench.contract;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

/**
 * The readings table over plain JDBC prepared statements (the apps give it their HikariCP pool, of
 * DatabaseSettings's size, on H2 or PostgreSQL), bounded as DatabaseSettings says: an insert that pushes the
 * oldest kept reading out deletes it, by primary key, on the same connection.
 * Autocommit is on and every method borrows a connection for its one statement and gives it back at once
 * (try-with-resources), so no connection is ever held across a wait. Every method blocks: an app that must
 * not block its threads calls it from its blocking side (ktor: Dispatchers.IO; spring-webflux: Offload).
 */
public final class ReadingStore {
    private final DataSource dataSource;
    private final DatabaseSettings settings;
    private final String[] idColumn;

    public ReadingStore(DataSource dataSource, DatabaseSettings settings) {
        this.dataSource = dataSource;
        this.settings = settings;
        this.idColumn = new String[] {settings.idColumn()};
    }

    /** Creates the table and stores the 50 seed readings; call it before the server listens. */
    public void createAndSeed(StandardReading standard) throws SQLException {
        try (Connection con = dataSource.getConnection()) {
            try (Statement st = con.createStatement()) {
                st.execute(Sql.CREATE_TABLE);
            }
            try (PreparedStatement ps = con.prepareStatement(Sql.INSERT)) {
                for (StandardReading.Seed seed : standard.seeds()) {
                    ps.setString(1, seed.deviceId());
                    ps.setLong(2, seed.ts());
                    ps.setString(3, seed.payload());
                    ps.addBatch();
                }
                ps.executeBatch();
            }
            // Only a store that keeps fewer readings than the seeds drops some of them here.
            long upTo = settings.evictedBy(highestId(con));
            if (upTo > 0) {
                try (PreparedStatement ps = con.prepareStatement(Sql.DELETE_UP_TO)) {
                    ps.setLong(1, upTo);
                    ps.executeUpdate();
                }
            }
        }
    }

    /** Stores a reading and returns its id; on a bounded store, also deletes the reading it pushes out. */

    public long insert(String deviceId, long ts, String payload) throws SQLException {
        try (Connection con = dataSource.getConnection();
             PreparedStatement ps = con.prepareStatement(Sql.INSERT, idColumn)) {
            ps.setString(1, deviceId);
            ps.setLong(2, ts);
            ps.setString(3, payload);
            ps.executeUpdate();
            long id;
            try (ResultSet keys = ps.getGeneratedKeys()) {
                if (!keys.next()) {
                    throw new SQLException("insert returned no id");
                }
                id = keys.getLong(1);
            }
            long evicted = settings.evictedBy(id);
            if (evicted > 0) {
                try (PreparedStatement delete = con.prepareStatement(Sql.DELETE_ONE)) {
                    delete.setLong(1, evicted);
                    delete.executeUpdate();
                }
            }
            return id;
        }
    }

    public List<Row> latest(int limit) throws SQLException {
        try (Connection con = dataSource.getConnection();
             PreparedStatement ps = con.prepareStatement(Sql.LATEST)) {
            ps.setInt(1, limit);
            try (ResultSet rs = ps.executeQuery()) {
                List<Row> rows = new ArrayList<>(limit);
                while (rs.next()) {
                    rows.add(new Row(rs.getLong(1), rs.getString(2), rs.getLong(3), rs.getString(4)));
                }
                return rows;
            }
        }
    }

    public List<Summary> latestSummaries(int limit) throws SQLException {
        try (Connection con = dataSource.getConnection();
             PreparedStatement ps = con.prepareStatement(Sql.LATEST_SUMMARIES)) {
            ps.setInt(1, limit);
            try (ResultSet rs = ps.executeQuery()) {
                List<Summary> rows = new ArrayList<>(limit);
                while (rs.next()) {
                    rows.add(new Summary(rs.getLong(1), rs.getString(2), rs.getLong(3)));
                }
                return rows;
            }
        }
    }

    /** /stats: the readings stored since the table was created, seeds included (the highest id). */
    public long highestId() throws SQLException {
        try (Connection con = dataSource.getConnection()) {
            return highestId(con);
        }
    }

    private static long highestId(Connection con) throws SQLException {
        try (PreparedStatement ps = con.prepareStatement(Sql.HIGHEST_ID);
             ResultSet rs = ps.executeQuery()) {
            if (!rs.next()) {
                throw new SQLException("MAX(id) returned no row");
            }
            return rs.getLong(1);
        }
    }
}
