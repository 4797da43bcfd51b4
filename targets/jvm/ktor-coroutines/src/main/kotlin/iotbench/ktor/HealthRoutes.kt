package iotbench.ktor

import io.ktor.server.response.respond
import io.ktor.server.routing.Route
import io.ktor.server.routing.get
import kotlinx.serialization.Serializable
import iotbench.contract.RuntimeInfo

@Serializable
data class Health(
    val status: String,
    val runtime: String,
    val framework: String,
    val threadModel: String,
    val availableProcessors: Int,
    val maxHeapBytes: Long?,
    val gc: String?,
    val jitCompileMs: Long?,
    val engine: EngineInfo,
)

private val GC: String? = RuntimeInfo.GC.ifEmpty { null }

fun Route.healthRoutes(engineInfo: EngineInfo) {
    get("/health") {
        val rt = Runtime.getRuntime()
        call.respond(
            Health(
                status = "UP",
                runtime = RuntimeInfo.runtime(),
                framework = "ktor",
                threadModel = "coroutines",
                availableProcessors = rt.availableProcessors(),
                maxHeapBytes = rt.maxMemory().takeIf { it != Long.MAX_VALUE },
                gc = GC,
                jitCompileMs = RuntimeInfo.jitCompileMs(),
                engine = engineInfo,
            )
        )
    }
}
