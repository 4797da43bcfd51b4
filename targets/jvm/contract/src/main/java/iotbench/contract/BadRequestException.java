package iotbench.contract;

/** A malformed request: every app answers it 400 {"error": message}. No stack trace (thrown on the hot path). */
public class BadRequestException extends RuntimeException {
    public BadRequestException(String message) {
        super(message, null, false, false);
    }
}
