package iotbench.javalin;

/** A malformed request: answered 400 {"error": message} (see {@link App}). */
final class BadRequestException extends RuntimeException {
    BadRequestException(String message) {
        super(message, null, false, false);
    }
}
