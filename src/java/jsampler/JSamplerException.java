package jsampler;

/** A command the profiler refused or could not carry out; the message is the agent's own line. */
public class JSamplerException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    public JSamplerException(String message) {
        super(message);
    }
}
