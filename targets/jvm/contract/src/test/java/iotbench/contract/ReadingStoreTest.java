package iotbench.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The embedded store's bound (docs/contract.md, "The embedded store is bounded"), on H2 as the apps run it. */
class ReadingStoreTest {
    private static final AtomicInteger DATABASES = new AtomicInteger();
    private static final StandardReading STANDARD = new StandardReading(new ObjectMapper());

    static Stream<Arguments> bounds() {
        return Stream.of(
                // keep, readings inserted after the 50 seeds, the ids the table holds then
                Arguments.of("0", 20, range(1, 70)),
                Arguments.of("", 20, range(1, 70)),
                Arguments.of("100", 20, range(1, 70)),
                Arguments.of("70", 20, range(1, 70)),
                Arguments.of("60", 20, range(11, 70)),
                Arguments.of("5", 20, range(66, 70)),
                Arguments.of("1", 3, range(53, 53)),
                Arguments.of("5", 0, range(46, 50)));
    }

    @ParameterizedTest(name = "READINGS_KEEP={0}, {1} inserts")
    @MethodSource("bounds")
    void keepsTheLatest(String keep, int inserts, List<Long> wantIds) throws SQLException {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:mem:bound-" + DATABASES.incrementAndGet() + ";DB_CLOSE_DELAY=-1");
        ReadingStore store = new ReadingStore(ds, DatabaseSettings.from(Map.of("READINGS_KEEP", keep)));
        store.createAndSeed(STANDARD);

        List<Long> got = new ArrayList<>();
        for (int i = 0; i < inserts; i++) {
            got.add(store.insert("dev-" + i, 1L + i, STANDARD.withDevice("dev-" + i)));
        }
        assertEquals(range(51, 50 + inserts), got, "ids the inserts answered");
        assertEquals(50L + inserts, store.highestId(), "/stats: every reading ever stored");
        assertEquals(wantIds, ids(ds), "ids the table holds");
    }

    private static List<Long> ids(JdbcDataSource ds) throws SQLException {
        try (Connection con = ds.getConnection();
             Statement st = con.createStatement();
             ResultSet rs = st.executeQuery("SELECT id FROM readings ORDER BY id")) {
            List<Long> ids = new ArrayList<>();
            while (rs.next()) {
                ids.add(rs.getLong(1));
            }
            return ids;
        }
    }

    private static List<Long> range(long from, long to) {
        List<Long> ids = new ArrayList<>();
        for (long id = from; id <= to; id++) {
            ids.add(id);
        }
        return ids;
    }
}
