package iotbench.ktor

import io.ktor.server.request.receiveText
import iotbench.contract.FanOut
import iotbench.contract.ReadingValidator
import iotbench.contract.Work
import io.ktor.server.response.respond
import io.ktor.server.routing.Route
import io.ktor.server.routing.get
import io.ktor.server.routing.post
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.serialization.Serializable
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive

@Serializable
data class Cpu(val pi: Double, val trace: Long, val primes: Int)

@Serializable
data class Waited(val waitedMs: Long)

@Serializable
data class Fib(val n: Int, val result: Long)

@Serializable
data class Ok(val ok: Boolean)

@Serializable
data class Stats(val rows: Long)

@Serializable
data class FannedOut(val tasks: Int, val waitedMs: Long)

fun Route.workRoutes(store: Database, fanOut: FanOut) {
    // /fanout's sub-tasks run on the contract's one fixed pool (FANOUT_POOL threads), as coroutines
    // dispatched onto it; each blocks its pool thread for 50 ms, as the seed's did.
    val fanOutPool = fanOut.executor().asCoroutineDispatcher()

    // CPU work: the contract's three tasks in parallel (seed 001's "parallel tasks"), as coroutines on
    // Dispatchers.Default, one thread per CPU; the call's coroutine waits for them.
    get("/cpu") {
        val answer = coroutineScope {
            val pi = async(Dispatchers.Default) { Work.monteCarloPi(1_000_000) }
            val trace = async(Dispatchers.Default) { Work.matrixTrace() }
            val primes = Work.countPrimes(100_000)
            Cpu(pi.await(), trace.await().toLong(), primes)
        }
        call.respond(answer)
    }

    get("/blocking") {
        val ms = ReadingValidator.blockingMs(call.request.queryParameters["ms"])
        delay(ms) // a timer, not a blocked thread
        call.respond(Waited(ms))
    }

    post("/process-data") {
        val n = (Readings.parse(call.receiveText()) as? JsonObject)?.get("n") as? JsonPrimitive
        val k = n?.takeIf { Readings.isNumber(it) && Readings.isJsonInteger(it.content) }?.content?.toIntOrNull()
        if (k == null || k < 1 || k > 40) throw BadRequest("n must be an integer from 1 to 40")
        call.respond(Fib(k, Work.fib(k)))
    }

    // The call's coroutine suspends in awaitAll: no Netty or call thread waits for the sub-tasks.
    get("/fanout") {
        coroutineScope {
            List(FanOut.TASKS) { async(fanOutPool) { FanOut.subTask() } }.awaitAll()
        }
        call.respond(FannedOut(FanOut.TASKS, FanOut.TASKS * FanOut.TASK_MS))
    }

    get("/downstream") {
        delay(20)
        call.respond(Ok(true))
    }

    get("/stats") {
        call.respond(Stats(store.highestId()))
    }
}
