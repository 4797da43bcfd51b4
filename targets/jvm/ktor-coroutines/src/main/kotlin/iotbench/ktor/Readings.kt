package iotbench.ktor

import iotbench.contract.ReadingValidator
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive

/**
 * Request-body parsing and the contract's validation, in the contract's order, on kotlinx.serialization's
 * JSON tree. The body is received as text (it is stored as received) and parsed with [Json.parseToJsonElement].
 */
object Readings {
    private val METRIC_NAMES: Array<String> = Array(ReadingValidator.METRICS) { ReadingValidator.metricName(it) }

    private val json = Json

    /**
     * Parses [body] as JSON (any value); [BadRequest] when it is not JSON. kotlinx.serialization's tree
     * reader accepts unquoted literals such as `abc` even in strict mode (kotlinx.serialization issues
     * #2511, #3227), so every non-string literal is checked to be `true`, `false`, `null` or an RFC 8259
     * number: "parses as JSON" means what it means for Jackson or JSON.parse.
     */
    fun parse(body: String, error: String = "body is not JSON"): JsonElement {
        val element = try {
            json.parseToJsonElement(body)
        } catch (e: Exception) { // SerializationException, IllegalArgumentException
            throw BadRequest(error)
        }
        if (!isStrict(element)) throw BadRequest(error)
        return element
    }

    /** Full validation of a reading; returns the parsed object. */
    fun validate(body: String): JsonObject {
        val node = parse(body, "body is not a JSON object") as? JsonObject
            ?: throw BadRequest("body is not a JSON object")
        if (node.size != ReadingValidator.FIELDS) throw BadRequest("expected 70 fields, got ${node.size}")
        val deviceId = node["deviceId"] as? JsonPrimitive
        if (deviceId == null || !deviceId.isString || deviceId.content.isEmpty() ||
            deviceId.content.codePointCount(0, deviceId.content.length) > 64
        ) {
            throw BadRequest("deviceId must be a string of 1 to 64 characters")
        }
        val timestamp = node["timestamp"] as? JsonPrimitive
        val ts = if (timestamp != null && isNumber(timestamp) && isJsonInteger(timestamp.content)) {
            timestamp.content.toLongOrNull()
        } else {
            null
        }
        if (ts == null || ts <= 0) throw BadRequest("timestamp must be an integer > 0")
        val type = node["type"] as? JsonPrimitive
        if (type == null || !type.isString) throw BadRequest("type must be a string")
        val firmware = node["firmware"] as? JsonPrimitive
        if (firmware == null || !firmware.isString) throw BadRequest("firmware must be a string")
        for (name in METRIC_NAMES) {
            val metric = node[name] as? JsonPrimitive
            if (metric == null || !isNumber(metric)) throw BadRequest("$name must be a number")
        }
        return node
    }

    fun deviceId(reading: JsonObject): String = (reading["deviceId"] as JsonPrimitive).content
    fun timestamp(reading: JsonObject): Long = (reading["timestamp"] as JsonPrimitive).content.toLong()

    /** For /ingest/fast (no field checks): deviceId and timestamp if present, else "" and 0. */
    fun deviceIdOrEmpty(element: JsonElement): String =
        ((element as? JsonObject)?.get("deviceId") as? JsonPrimitive)?.content ?: ""

    fun timestampOrZero(element: JsonElement): Long {
        val p = (element as? JsonObject)?.get("timestamp") as? JsonPrimitive ?: return 0
        if (!isNumber(p)) return p.content.toLongOrNull() ?: 0
        return p.content.toLongOrNull() ?: p.content.toDoubleOrNull()?.toLong() ?: 0
    }

    fun isNumber(p: JsonPrimitive): Boolean =
        p !is JsonNull && !p.isString && p.content != "true" && p.content != "false"

    private fun isStrict(e: JsonElement): Boolean = when (e) {
        is JsonObject -> e.values.all(::isStrict)
        is JsonArray -> e.all(::isStrict)
        is JsonNull -> true
        is JsonPrimitive -> e.isString || e.content == "true" || e.content == "false" || isJsonNumber(e.content)
    }

    /** `-?(0|[1-9][0-9]*)` */
    fun isJsonInteger(s: String): Boolean {
        var i = if (s.startsWith('-')) 1 else 0
        if (i >= s.length) return false
        if (s[i] == '0') return i + 1 == s.length
        while (i < s.length) {
            if (s[i] !in '0'..'9') return false
            i++
        }
        return true
    }

    /** RFC 8259 number: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` */
    fun isJsonNumber(s: String): Boolean {
        val n = s.length
        var i = 0
        if (i < n && s[i] == '-') i++
        if (i >= n) return false
        when (s[i]) {
            '0' -> i++
            in '1'..'9' -> while (i < n && s[i] in '0'..'9') i++
            else -> return false
        }
        if (i < n && s[i] == '.') {
            i++
            val start = i
            while (i < n && s[i] in '0'..'9') i++
            if (i == start) return false
        }
        if (i < n && (s[i] == 'e' || s[i] == 'E')) {
            i++
            if (i < n && (s[i] == '+' || s[i] == '-')) i++
            val start = i
            while (i < n && s[i] in '0'..'9') i++
            if (i == start) return false
        }
        return i == n
    }
}
