package iotbench.ktor

import io.ktor.http.HttpStatusCode
import io.ktor.server.application.Application
import io.ktor.server.application.install
import io.ktor.server.plugins.statuspages.StatusPages
import io.ktor.server.response.respond
import kotlinx.serialization.Serializable

/** A malformed request (the contract module's): answered 400 {"error": message}. */
typealias BadRequest = iotbench.contract.BadRequestException

@Serializable
data class ApiError(val error: String)

/**
 * Contract: a malformed request is 400 {"error": "..."}; anything else that fails is 500 {"error": "..."}.
 * Unknown paths and methods answer 404/405 with a JSON body too.
 */
fun Application.installErrorPages() {
    install(StatusPages) {
        exception<BadRequest> { call, e ->
            call.respond(HttpStatusCode.BadRequest, ApiError(e.message ?: "bad request"))
        }
        // Ktor's own: thrown by receive*() for an unusable body or Content-Type.
        exception<io.ktor.server.plugins.BadRequestException> { call, _ ->
            call.respond(HttpStatusCode.BadRequest, ApiError("malformed request"))
        }
        exception<Throwable> { call, e ->
            call.respond(HttpStatusCode.InternalServerError, ApiError(e.message ?: e.javaClass.simpleName))
        }
        status(HttpStatusCode.NotFound) { call, status -> call.respond(status, ApiError("not found")) }
        status(HttpStatusCode.MethodNotAllowed) { call, status -> call.respond(status, ApiError("method not allowed")) }
    }
}
