package iotbench.springwebflux;

/** A malformed request: answered 400 {"error": message} by {@link ApiExceptionHandler}. */
public class BadRequestException extends RuntimeException {
    public BadRequestException(String message) {
        super(message, null, false, false);
    }
}
