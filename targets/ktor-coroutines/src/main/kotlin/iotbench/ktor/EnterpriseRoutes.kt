package iotbench.ktor

import io.ktor.client.HttpClient
import io.ktor.client.request.get
import io.ktor.client.statement.bodyAsText
import io.ktor.http.isSuccess
import io.ktor.server.response.respond
import io.ktor.server.routing.Route
import io.ktor.server.routing.get
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.withContext
import kotlinx.serialization.Serializable
import kotlinx.serialization.builtins.ListSerializer
import kotlinx.serialization.json.Json
import java.nio.file.Files

private const val ROWS = 10
private const val FILE_BYTES = 4096
private const val CACHE_ENTRIES = 1000

@Serializable
data class Enterprise(val id: Long, val rows: Int, val bytes: Int, val downstream: Boolean, val cacheHit: Boolean)

/** The "enterprise" request: DB write, DB read, file I/O, downstream HTTP call, cache lookup. */
fun Route.enterpriseRoutes(store: ReadingStore, client: HttpClient, downstreamUrl: String) {
    val enterprisePayload = store.standardReadingWith("enterprise")
    val enterpriseTs = Readings.timestamp(store.standardReading)
    val cache = LruCache<String, List<ReadingStore.Summary>>(CACHE_ENTRIES)
    val rowsSerializer = ListSerializer(ReadingStore.Summary.serializer())

    get("/enterprise") {
        // 1. insert the standard reading as device "enterprise"
        val id = store.insert("enterprise", enterpriseTs, enterprisePayload)

        // 2. the latest 10 readings
        val rows = store.latestSummaries(ROWS)

        // 3. write them as JSON, space-padded to 4096 bytes, to a new temp file; read it back; delete it
        val json = Json.encodeToString(rowsSerializer, rows).toByteArray(Charsets.UTF_8)
        check(json.size <= FILE_BYTES) { "rows JSON exceeds $FILE_BYTES bytes" }
        val padded = json.copyOf(FILE_BYTES)
        padded.fill(' '.code.toByte(), json.size, FILE_BYTES)
        val readBack = withContext(Dispatchers.IO) {
            val file = Files.createTempFile("iotbench-", ".json")
            try {
                Files.write(file, padded)
                Files.readAllBytes(file)
            } finally {
                Files.deleteIfExists(file)
            }
        }

        // 4. the downstream call (suspends; pooled keep-alive connection), its JSON parsed
        val response = client.get(downstreamUrl)
        val text = response.bodyAsText()
        check(response.status.isSuccess()) { "downstream answered ${response.status.value}" }
        Json.parseToJsonElement(text)

        // 5. LRU lookup, storing step 2's rows on a miss
        val key = "device:${id % 100}"
        val hit = cache[key] != null
        if (!hit) cache[key] = rows
        call.respond(Enterprise(id, rows.size, readBack.size, true, hit))
    }
}
