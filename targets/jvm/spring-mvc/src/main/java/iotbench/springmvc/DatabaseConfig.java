package iotbench.springmvc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import iotbench.contract.DatabaseSettings;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The store from the environment (DatabaseSettings: H2 in memory, or PostgreSQL from DATABASE_URL) behind a
 * HikariCP pool of fixed size (DB_POOL_SIZE, 10 by default), whatever the thread model. Spring Boot's own
 * DataSource backs off when this one exists.
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
}
