package iotbench.contract;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;

/**
 * HotSpot's own performance counters, read from the file it keeps them in for jstat and jcmd ({@code
 * /tmp/hsperfdata_<user>/<pid>}, the "jvmstat" shared memory, on by default: {@code -XX:+UsePerfData}): the
 * file is mapped once and a counter read is one {@code long} load from memory the JVM updates in place. No
 * internal class and no {@code --add-exports}: the same bytes jstat reads from outside the process. The
 * format (version 2.0, unchanged since JDK 6) is not a supported interface, so anything unexpected in it
 * makes {@link #open} fail, and the caller reports the counters as unavailable rather than guess.
 *
 * <p>Layout (HotSpot's perfMemory.hpp, PerfDataPrologue and PerfDataEntry): a 32-byte prologue (magic
 * 0xcafec0c0 big-endian, byte order, major, minor, accessible, used, overflow, modification time, entry
 * offset, entry count), then entries (length, name offset, vector length, type, flags, units, variability,
 * data offset), each name NUL-terminated and each {@code long} counter ('J') in the file's byte order.
 */
final class PerfData {
    private static final int MAGIC = 0xcafec0c0;
    private static final Path TMP = Path.of("/tmp");

    private final ByteBuffer buffer;
    private final Map<String, Integer> offsets = new HashMap<>();
    private int scanned;

    private PerfData(ByteBuffer buffer) {
        this.buffer = buffer;
    }

    /** This JVM's counters file, mapped; an IOException says why it cannot be read. */
    static PerfData open() throws IOException {
        return open(file());
    }

    static PerfData open(Path file) throws IOException {
        ByteBuffer map;
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            map = channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size());
        }
        if (map.capacity() < 32 || map.order(ByteOrder.BIG_ENDIAN).getInt(0) != MAGIC) {
            throw new IOException(file + " is not a jvmstat file");
        }
        map.order(map.get(4) == 0 ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN);
        if (map.get(5) != 2) {
            throw new IOException(file + ": jvmstat version " + map.get(5) + "." + map.get(6) + ", read 2.x only");
        }
        return new PerfData(map);
    }

    /** HotSpot puts it in /tmp (not java.io.tmpdir), in a folder named after the user. */
    private static Path file() throws IOException {
        String pid = Long.toString(ProcessHandle.current().pid());
        Path mine = TMP.resolve("hsperfdata_" + System.getProperty("user.name")).resolve(pid);
        if (Files.isReadable(mine)) {
            return mine;
        }
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(TMP, "hsperfdata_*")) {
            for (Path dir : dirs) {
                if (Files.isReadable(dir.resolve(pid))) {
                    return dir.resolve(pid);
                }
            }
        }
        throw new IOException("no /tmp/hsperfdata_*/" + pid + " (the JVM runs with -XX:-UsePerfData"
                + " or -XX:+PerfDisableSharedMem, or /tmp is not writable)");
    }

    /** A long counter's value now, or -1 when the JVM has no such counter (yet). */
    synchronized long get(String name) {
        Integer at = offsets.get(name);
        if (at == null) {
            scan();
            at = offsets.get(name);
            if (at == null) {
                return -1;
            }
        }
        return buffer.getLong(at);
    }

    /** Indexes the long counters added since the last scan (the JVM appends entries and never moves them). */
    private void scan() {
        if (buffer.get(7) == 0) {
            return; // not yet accessible
        }
        int count = buffer.getInt(28);
        int entry = buffer.getInt(24);
        for (int i = 0; i < count; i++) {
            int length = buffer.getInt(entry);
            if (length <= 0 || entry + length > buffer.capacity()) {
                return;
            }
            if (i >= scanned && buffer.get(entry + 12) == 'J' && buffer.getInt(entry + 8) == 0) {
                offsets.put(name(entry + buffer.getInt(entry + 4)), entry + buffer.getInt(entry + 16));
            }
            entry += length;
        }
        scanned = count;
    }

    private String name(int at) {
        int end = at;
        while (end < buffer.capacity() && buffer.get(end) != 0) {
            end++;
        }
        byte[] bytes = new byte[end - at];
        buffer.get(at, bytes);
        return new String(bytes, StandardCharsets.US_ASCII);
    }
}
