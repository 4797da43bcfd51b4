package iotbench.ktor

import com.fasterxml.jackson.databind.ObjectMapper
import com.zaxxer.hikari.HikariConfig
import com.zaxxer.hikari.HikariDataSource
import iotbench.contract.DatabaseSettings
import iotbench.contract.ReadingStore
import iotbench.contract.Row
import iotbench.contract.StandardReading
import iotbench.contract.Summary
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.withContext

/**
 * The contract's JDBC store (H2 in memory, or PostgreSQL from DATABASE_URL, behind a HikariCP pool of exactly
 * DB_POOL_SIZE connections, 10 by default: DatabaseSettings) made suspending.
 * JDBC blocks, so every statement runs in `withContext(Dispatchers.IO)`: the calling coroutine suspends, an
 * IO thread borrows a connection for that one statement and gives it back at once. No connection is ever
 * held across a suspension point (a `delay`, the downstream call, ...).
 */
class Database private constructor(
    /** The pool, for GET /signals (Signals.hikari). */
    val dataSource: HikariDataSource,
    private val store: ReadingStore,
    val standard: StandardReading,
) {
    suspend fun insert(deviceId: String, ts: Long, payload: String): Long =
        withContext(Dispatchers.IO) { store.insert(deviceId, ts, payload) }

    suspend fun latest(limit: Int): List<Row> = withContext(Dispatchers.IO) { store.latest(limit) }

    suspend fun latestSummaries(limit: Int): List<Summary> =
        withContext(Dispatchers.IO) { store.latestSummaries(limit) }

    /** /stats: the readings stored since the table was created (the highest id). */
    suspend fun highestId(): Long = withContext(Dispatchers.IO) { store.highestId() }

    fun close() = dataSource.close()

    companion object {
        /** Opens the pool, creates the table and stores the 50 seed readings. Runs before the server listens. */
        fun create(): Database {
            val settings = DatabaseSettings.fromEnv()
            val ds = HikariDataSource(HikariConfig().apply {
                poolName = "iot"
                jdbcUrl = settings.jdbcUrl()
                username = settings.user()
                password = settings.password()
                // Contract: a fixed pool, the same size for every target.
                maximumPoolSize = settings.poolSize()
                minimumIdle = settings.poolSize()
            })
            // Jackson serializes the seeds (startup only; requests are read with kotlinx.serialization).
            val standard = StandardReading(ObjectMapper())
            val store = ReadingStore(ds, settings)
            store.createAndSeed(standard)
            return Database(ds, store, standard)
        }
    }
}
