package iotbench.ktor

import io.ktor.client.HttpClient
import io.ktor.client.request.get
import io.ktor.client.statement.bodyAsText
import io.ktor.http.isSuccess
import io.ktor.server.response.respond
import io.ktor.server.routing.Route
import io.ktor.server.routing.get
import iotbench.contract.Enterprise
import iotbench.contract.LruCache
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.withContext
import kotlinx.serialization.Serializable
import kotlinx.serialization.builtins.ListSerializer
import kotlinx.serialization.json.Json

@Serializable
data class EnterpriseAnswer(val id: Long, val rows: Int, val bytes: Int, val downstream: Boolean, val cacheHit: Boolean)

/** Step 2's row as kotlinx.serialization writes it to the temp file (the contract's Summary is a Java record). */
@Serializable
data class RowSummary(val id: Long, val deviceId: String, val ts: Long)

/** The "enterprise" request: DB write, DB read, file I/O, downstream HTTP call, cache lookup. */
fun Route.enterpriseRoutes(store: Database, client: HttpClient, downstreamUrl: String) {
    val enterprisePayload = store.standard.withDevice(Enterprise.DEVICE_ID)
    val enterpriseTs = store.standard.timestamp()
    val cache = LruCache<String, List<RowSummary>>(Enterprise.CACHE_ENTRIES)
    val rowsSerializer = ListSerializer(RowSummary.serializer())

    get("/enterprise") {
        // 1. insert the standard reading as device "enterprise"
        val id = store.insert(Enterprise.DEVICE_ID, enterpriseTs, enterprisePayload)

        // 2. the latest 10 readings
        val rows = store.latestSummaries(Enterprise.ROWS).map { RowSummary(it.id(), it.deviceId(), it.ts()) }

        // 3. write them as JSON, space-padded to 4096 bytes, to a new temp file; read it back; delete it
        val json = Json.encodeToString(rowsSerializer, rows).toByteArray(Charsets.UTF_8)
        val bytes = withContext(Dispatchers.IO) { Enterprise.fileRoundTrip(json) }

        // 4. the downstream call (suspends; pooled keep-alive connection), its JSON parsed
        val response = client.get(downstreamUrl)
        val text = response.bodyAsText()
        check(response.status.isSuccess()) { "downstream answered ${response.status.value}" }
        Json.parseToJsonElement(text)

        // 5. LRU lookup, storing step 2's rows on a miss
        val key = Enterprise.cacheKey(id)
        val hit = cache.get(key) != null
        if (!hit) cache.put(key, rows)
        call.respond(EnterpriseAnswer(id, rows.size, bytes, true, hit))
    }
}
