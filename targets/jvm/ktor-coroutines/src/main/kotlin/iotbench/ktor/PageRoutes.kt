package iotbench.ktor

import io.ktor.http.ContentType
import io.ktor.http.withCharset
import io.ktor.server.response.respondText
import io.ktor.server.routing.Route
import io.ktor.server.routing.get
import iotbench.contract.PageRow
import kotlinx.html.body
import kotlinx.html.h1
import kotlinx.html.head
import kotlinx.html.html
import kotlinx.html.lang
import kotlinx.html.meta
import kotlinx.html.stream.appendHTML
import kotlinx.html.table
import kotlinx.html.tbody
import kotlinx.html.td
import kotlinx.html.th
import kotlinx.html.thead
import kotlinx.html.title
import kotlinx.html.tr
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive

private fun JsonObject.metric(name: String): Double =
    (this[name] as? JsonPrimitive)?.content?.toDoubleOrNull() ?: 0.0

/**
 * GET /page: the latest 50 readings rendered with kotlinx.html, Ktor's HTML DSL. Ktor's `respondHtml`
 * always pretty-prints (newline + indentation per element, ~11 KB for this page), so the same DSL
 * is rendered with `appendHTML(prettyPrint = false)` and sent with `respondText` (~6.8 KB).
 */
fun Route.pageRoutes(store: Database) {
    get("/page") {
        val rows = store.latest(PageRow.ROWS).map { row ->
            val payload = Json.parseToJsonElement(row.payload()) as JsonObject
            PageRow(
                row.id(), row.deviceId(), row.ts(),
                payload.metric("metric01"), payload.metric("metric02"), payload.metric("metric03"),
            )
        }
        val page = buildString(8192) {
            append("<!DOCTYPE html>\n")
            appendHTML(prettyPrint = false).html {
                lang = "en"
                head {
                    meta(charset = "utf-8")
                    title("iotbench: latest readings")
                }
                body {
                    h1 { +"Latest readings" }
                    table {
                        thead {
                            tr {
                                for (h in listOf("id", "deviceId", "timestamp", "metric01", "metric02", "metric03")) {
                                    th { +h }
                                }
                            }
                        }
                        tbody {
                            for (r in rows) {
                                tr(classes = "reading") {
                                    td { +r.id().toString() }
                                    td { +r.deviceId() }
                                    td { +r.ts().toString() }
                                    td { +r.metric01().toString() }
                                    td { +r.metric02().toString() }
                                    td { +r.metric03().toString() }
                                }
                            }
                        }
                    }
                }
            }
        }
        call.respondText(page, ContentType.Text.Html.withCharset(Charsets.UTF_8))
    }
}
