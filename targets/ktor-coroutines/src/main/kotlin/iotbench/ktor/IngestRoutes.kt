package iotbench.ktor

import io.ktor.server.request.receiveText
import io.ktor.server.response.respond
import io.ktor.server.routing.Route
import io.ktor.server.routing.post
import kotlinx.coroutines.delay
import kotlinx.serialization.Serializable
import kotlinx.serialization.json.JsonPrimitive
import kotlin.math.sqrt

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
fun Route.ingestRoutes(store: ReadingStore) {
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
        val values = DoubleArray(Readings.METRICS) { i ->
            (reading[Readings.METRIC_NAMES[i]] as JsonPrimitive).content.toDouble()
        }
        var sum = 0.0
        var min = Double.POSITIVE_INFINITY
        var max = Double.NEGATIVE_INFINITY
        for (v in values) {
            sum += v
            min = minOf(min, v)
            max = maxOf(max, v)
        }
        val mean = sum / values.size
        var squares = 0.0
        for (v in values) squares += (v - mean) * (v - mean)
        val stddev = sqrt(squares / values.size)
        val pi = Work.monteCarloPi(10_000)
        call.respond(Realistic(id, elapsedMs(start), mean, min, max, stddev, pi))
    }
}
