package iotbench.ktor

import com.fasterxml.jackson.databind.ObjectMapper
import com.zaxxer.hikari.HikariConfig
import com.zaxxer.hikari.HikariDataSource
import iotbench.contract.ReadingStore
import iotbench.contract.Row
import iotbench.contract.StandardReading
import iotbench.contract.Summary
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.withContext

/**
 * The contract's JDBC store (H2 in-memory behind a HikariCP pool of exactly 10 connections) made suspending.
 * JDBC blocks, so every statement runs in `withContext(Dispatchers.IO)`: the calling coroutine suspends, an
 * IO thread borrows a connection for that one statement and gives it back at once. No connection is ever
 * held across a suspension point (a `delay`, the downstream call, ...).
 */
class Database private constructor(
    private val ds: HikariDataSource,
    private val store: ReadingStore,
    val standard: StandardReading,
) {
    suspend fun insert(deviceId: String, ts: Long, payload: String): Long =
        withContext(Dispatchers.IO) { store.insert(deviceId, ts, payload) }

    suspend fun latest(limit: Int): List<Row> = withContext(Dispatchers.IO) { store.latest(limit) }

    suspend fun latestSummaries(limit: Int): List<Summary> =
        withContext(Dispatchers.IO) { store.latestSummaries(limit) }

    suspend fun count(): Long = withContext(Dispatchers.IO) { store.count() }

    fun close() = ds.close()

    companion object {
        /** Opens the pool, creates the table and stores the 50 seed readings. Runs before the server listens. */
        fun create(): Database {
            val ds = HikariDataSource(HikariConfig().apply {
                poolName = "iot"
                jdbcUrl = "jdbc:h2:mem:iot;DB_CLOSE_DELAY=-1"
                username = "sa"
                password = ""
                // Contract: a pool of exactly 10 connections.
                maximumPoolSize = 10
                minimumIdle = 10
            })
            // Jackson serializes the seeds (startup only; requests are read with kotlinx.serialization).
            val standard = StandardReading(ObjectMapper())
            val store = ReadingStore(ds)
            store.createAndSeed(standard)
            return Database(ds, store, standard)
        }
    }
}
