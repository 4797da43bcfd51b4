package iotbench.ktor

import io.ktor.server.request.receiveText
import iotbench.contract.Enrichment
import iotbench.contract.ReadingValidator
import io.ktor.server.response.respond
import io.ktor.server.routing.Route
import io.ktor.server.routing.post
import kotlinx.coroutines.delay
import kotlinx.serialization.Serializable
import kotlinx.serialization.json.JsonPrimitive

@Serializable
data class Ingested(val id: Long, val processingMs: Double)

@Serializable
data class Fast(val id: Long)

@Serializable
data class Realistic(
    val id: Long,
    val processingMs: Double,
    val mean: Double,
    val min: Double,
    val max: Double,
    val stddev: Double,
    val pi: Double,
)

fun elapsedMs(startNanos: Long): Double = (System.nanoTime() - startNanos) / 1_000_000.0

/** The body is received as text so that the payload is stored exactly as received. */
fun Route.ingestRoutes(store: Database) {
    post("/ingest") {
        val start = System.nanoTime()
        val body = call.receiveText()
        val reading = Readings.validate(body)
        val id = store.insert(Readings.deviceId(reading), Readings.timestamp(reading), body)
        delay(50) // stands for a blocking I/O call, awaited without blocking a thread; no connection held
        call.respond(Ingested(id, elapsedMs(start)))
    }

    post("/ingest/fast") {
        val body = call.receiveText()
        val reading = Readings.parse(body)
        val id = store.insert(Readings.deviceIdOrEmpty(reading), Readings.timestampOrZero(reading), body)
        call.respond(Fast(id))
    }

    post("/ingest/realistic") {
        val start = System.nanoTime()
        val body = call.receiveText()
        val reading = Readings.validate(body)
        val id = store.insert(Readings.deviceId(reading), Readings.timestamp(reading), body)

        // Enrichment: CPU work, on the call's coroutine (Netty call-group thread).
        val values = DoubleArray(ReadingValidator.METRICS) { i ->
            (reading[ReadingValidator.metricName(i)] as JsonPrimitive).content.toDouble()
        }
        val e = Enrichment.of(values)
        call.respond(Realistic(id, elapsedMs(start), e.mean(), e.min(), e.max(), e.stddev(), e.pi()))
    }
}
