package iotbench.springwebflux;

import java.util.Map;

import iotbench.contract.BadRequestException;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebInputException;

/** Contract: a malformed request is 400 {"error": "..."}; anything else that fails is 500 {"error": "..."}. */
@RestControllerAdvice
class ApiExceptionHandler {

    @ExceptionHandler(BadRequestException.class)
    ResponseEntity<Map<String, String>> badRequest(BadRequestException e) {
        return error(HttpStatus.BAD_REQUEST, e.getMessage());
    }

    /** Unreadable body, missing or mistyped parameters. */
    @ExceptionHandler(ServerWebInputException.class)
    ResponseEntity<Map<String, String>> unreadable(ServerWebInputException e) {
        return error(HttpStatus.BAD_REQUEST, "malformed request");
    }

    /** 404 (no route, no resource), 405, 406, 415: the framework's status, a JSON body. */
    @ExceptionHandler(ResponseStatusException.class)
    ResponseEntity<Map<String, String>> status(ResponseStatusException e) {
        HttpStatusCode code = e.getStatusCode();
        HttpStatus known = HttpStatus.resolve(code.value());
        String message = e.getReason() != null ? e.getReason()
                : known != null ? known.getReasonPhrase().toLowerCase() : "error";
        return error(code, message);
    }

    @ExceptionHandler(Exception.class)
    ResponseEntity<Map<String, String>> failure(Exception e) {
        String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        return error(HttpStatus.INTERNAL_SERVER_ERROR, message);
    }

    private static ResponseEntity<Map<String, String>> error(HttpStatusCode status, String message) {
        return ResponseEntity.status(status).body(Map.of("error", message));
    }
}
