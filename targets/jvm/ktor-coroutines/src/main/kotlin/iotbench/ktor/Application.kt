package iotbench.ktor

import io.ktor.client.HttpClient
import io.ktor.client.engine.cio.CIO
import io.ktor.client.engine.cio.endpoint
import io.ktor.serialization.kotlinx.json.json
import io.ktor.server.application.Application
import io.ktor.server.application.ApplicationStopped
import io.ktor.server.application.install
import io.ktor.server.engine.connector
import io.ktor.server.engine.embeddedServer
import io.ktor.server.engine.sslConnector
import io.ktor.server.netty.Netty
import io.ktor.server.plugins.contentnegotiation.ContentNegotiation
import io.ktor.server.routing.routing
import io.netty.channel.epoll.Epoll
import iotbench.contract.FanOut
import iotbench.contract.Protocol
import iotbench.contract.Signals
import kotlinx.serialization.Serializable

/** The Netty engine's thread groups as configured (Ktor's defaults), reported by /health. */
@Serializable
data class EngineInfo(
    val engine: String,
    val transport: String,
    val connectionGroupSize: Int,
    val workerGroupSize: Int,
    val callGroupSize: Int,
)

/**
 * Environment: PORT (default 8080), DOWNSTREAM_URL (default http://127.0.0.1:$PORT/downstream), and the
 * contract's DATABASE_URL, DB_POOL_SIZE, READINGS_KEEP, FANOUT_POOL and SIGNALS_PORT (iotbench.contract). Nothing
 * else.
 * The table and its 50 seeds are created before the server binds its port.
 */
fun main() {
    val port = System.getenv("PORT")?.takeIf { it.isNotBlank() }?.trim()?.toInt() ?: 8080
    val downstreamUrl = System.getenv("DOWNSTREAM_URL")?.takeIf { it.isNotBlank() }
        ?: "http://127.0.0.1:$port/downstream"
    val signals = Signals.fromEnv() // GET /signals on SIGNALS_PORT, a server of its own (not Netty)
    val store = Database.create()
    val fanOut = FanOut.fromEnv()
    // The pools: HikariCP and /fanout's. Netty's loops are not reachable: the engine keeps its groups private.
    signals.hikari(store.dataSource).fanOut(fanOut)
        .unavailable("netty", "Ktor's NettyApplicationEngine keeps its event loop groups private")
        .start()

    lateinit var engineInfo: EngineInfo
    val protocol = Protocol.fromEnv(Protocol.all())
    val bindAddress = System.getenv("BIND_ADDRESS") ?: "127.0.0.1"
    embeddedServer(Netty, configure = {
        // Netty serves every protocol itself, as Ktor's docs configure it: sslConnector (JSSE, TLS 1.3 only)
        // with ALPN h2 when HTTP/2 is on, or a plain connector with h2c (prior knowledge or upgrade).
        if (protocol.tls()) {
            val password = "iotbench".toCharArray() // the key store is in memory only
            sslConnector(Protocol.keyStore(password), "iotbench", { password }, { password }) {
                host = bindAddress
                this.port = port
                enabledProtocols = listOf(Protocol.TLS_VERSION)
            }
        } else {
            connector {
                host = bindAddress
                this.port = port
            }
        }
        enableHttp2 = protocol.http2()
        enableH2c = protocol == Protocol.H2C
        // Thread groups, runningLimit, timeouts: Ktor's defaults, on purpose (README.md, "Tuning").
        // connectionGroupSize = workerGroupSize = availableProcessors / 2 + 1, callGroupSize = availableProcessors.
        engineInfo = EngineInfo(
            engine = "netty",
            transport = if (Epoll.isAvailable()) "epoll" else "nio",
            connectionGroupSize = connectionGroupSize,
            workerGroupSize = workerGroupSize,
            callGroupSize = callGroupSize,
        )
    }) {
        module(store, fanOut, downstreamUrl, engineInfo)
    }.start(wait = true)
}

fun Application.module(store: Database, fanOut: FanOut, downstreamUrl: String, engineInfo: EngineInfo) {
    // JSON: kotlinx.serialization through ContentNegotiation (Ktor's default JSON converter).
    install(ContentNegotiation) { json() }
    installErrorPages()

    // One shared client for the downstream call of /enterprise: Ktor's HttpClient on the CIO engine
    // (connection pool with keep-alive). The values are CIO's defaults, written out to be visible.
    val client = HttpClient(CIO) {
        expectSuccess = false
        engine {
            requestTimeout = 15_000
            maxConnectionsCount = 1000
            endpoint {
                connectTimeout = 5_000
                keepAliveTime = 5_000
                maxConnectionsPerRoute = 100
            }
        }
    }
    monitor.subscribe(ApplicationStopped) {
        client.close()
        store.close()
    }

    routing {
        healthRoutes(engineInfo)
        ingestRoutes(store)
        workRoutes(store, fanOut)
        pageRoutes(store)
        enterpriseRoutes(store, client, downstreamUrl)
    }
}
