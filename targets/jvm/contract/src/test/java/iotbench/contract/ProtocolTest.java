package iotbench.contract;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.util.Base64;
import java.util.EnumSet;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ProtocolTest {
    @ParameterizedTest(name = "IOTBENCH_PROTOCOL={0}")
    @CsvSource(value = {"NULL,http1", "'',http1", "http1,http1", "https,https", "h2,h2", "h2c,h2c"}, nullValues = "NULL")
    void readsTheProtocol(String value, String want) {
        assertEquals(want, Protocol.parse(value, Protocol.all()).toString());
    }

    @Test
    void refusesWhatTheAppDoesNotServe() {
        var e = assertThrows(IllegalArgumentException.class,
                () -> Protocol.parse("h2", EnumSet.of(Protocol.HTTP1, Protocol.HTTPS)));
        assertEquals("IOTBENCH_PROTOCOL=h2: this app serves http1, https (its README says why)", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Protocol.parse("h3", Protocol.all()));
        assertEquals("IOTBENCH_PROTOCOL=h3: give one of http1, https, h2, h2c", e.getMessage());
    }

    @Test
    void springBootPropertiesPerProtocol() {
        assertEquals("false", Protocol.HTTP1.springBootProperties().get("server.http2.enabled"));
        assertFalse(Protocol.HTTP1.springBootProperties().containsKey("server.ssl.bundle"));
        var h2 = Protocol.H2.springBootProperties();
        assertEquals("true", h2.get("server.http2.enabled"));
        assertEquals("iotbench", h2.get("server.ssl.bundle"));
        assertEquals("TLSv1.3", h2.get("spring.ssl.bundle.pem.iotbench.options.enabled-protocols"));
        assertEquals("false", Protocol.HTTPS.springBootProperties().get("server.http2.enabled"));
        var h2c = Protocol.H2C.springBootProperties();
        assertEquals("true", h2c.get("server.http2.enabled"));
        assertFalse(h2c.containsKey("server.ssl.bundle"));
    }

    /** A PEM pair as iotbench writes it (an ECDSA P-256 leaf, a PKCS #8 key), made here with the JDK's keytool. */
    @Test
    void keyStoreFromPem(@TempDir Path dir) throws Exception {
        Path p12 = dir.resolve("made.p12");
        char[] pw = "changeit".toCharArray();
        Process kt = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair", "-keyalg", "EC", "-groupname", "secp256r1", "-alias", "leaf", "-dname", "CN=localhost",
                "-validity", "1", "-storetype", "PKCS12", "-keystore", p12.toString(), "-storepass", "changeit")
                .inheritIO().start();
        assertEquals(0, kt.waitFor());
        KeyStore made = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(p12)) {
            made.load(in, pw);
        }
        PrivateKey key = (PrivateKey) made.getKey("leaf", pw);
        Base64.Encoder b64 = Base64.getMimeEncoder(64, "\n".getBytes());
        Path cert = dir.resolve("cert.pem"), keyFile = dir.resolve("key.pem");
        Files.writeString(cert, "-----BEGIN CERTIFICATE-----\n"
                + b64.encodeToString(made.getCertificate("leaf").getEncoded()) + "\n-----END CERTIFICATE-----\n");
        Files.writeString(keyFile, "-----BEGIN PRIVATE KEY-----\n" + b64.encodeToString(key.getEncoded())
                + "\n-----END PRIVATE KEY-----\n");

        KeyStore ks = Protocol.keyStore(cert, keyFile, pw);
        assertTrue(ks.isKeyEntry("iotbench"));
        assertArrayEquals(key.getEncoded(), ks.getKey("iotbench", pw).getEncoded());
        assertEquals(made.getCertificate("leaf"), ks.getCertificate("iotbench"));
    }

    @Test
    void tlsAndHttp2() {
        assertEquals(Set.of(Protocol.HTTPS, Protocol.H2),
                EnumSet.copyOf(Protocol.all().stream().filter(Protocol::tls).toList()));
        assertEquals(Set.of(Protocol.H2, Protocol.H2C),
                EnumSet.copyOf(Protocol.all().stream().filter(Protocol::http2).toList()));
    }
}
