package iotbench.springmvc;

import java.sql.SQLException;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import iotbench.contract.DatabaseSettings;
import iotbench.contract.ReadingStore;
import iotbench.contract.StandardReading;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The store from the environment (DatabaseSettings: H2 in memory, or PostgreSQL from DATABASE_URL) behind a
 * HikariCP pool of fixed size (DB_POOL_SIZE, 10 by default), whatever the thread model. Spring Boot's own
 * DataSource backs off when this one exists. The readings go through the contract's ReadingStore, as every JVM
 * app's do: one store, so that the apps differ in their web side only.
 */
@Configuration(proxyBeanMethods = false)
public class DatabaseConfig {
    @Bean
    DatabaseSettings databaseSettings() {
        return DatabaseSettings.fromEnv();
    }

    @Bean(destroyMethod = "close")
    HikariDataSource dataSource(DatabaseSettings settings) {
        HikariConfig config = new HikariConfig();
        config.setPoolName("iotbench");
        config.setJdbcUrl(settings.jdbcUrl());
        config.setUsername(settings.user());
        config.setPassword(settings.password());
        config.setMaximumPoolSize(settings.poolSize());
        config.setMinimumIdle(settings.poolSize());
        return new HikariDataSource(config);
    }

    /** Created and seeded before the web server starts listening. */
    @Bean
    ReadingStore readingStore(DataSource dataSource, DatabaseSettings settings, StandardReading standard)
            throws SQLException {
        ReadingStore store = new ReadingStore(dataSource, settings);
        store.createAndSeed(standard);
        return store;
    }
}
