package iotbench.contract;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Arrays;
import java.util.Base64;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The protocol iotbench asks a target to serve on its port (docs/protocols.md): env {@code IOTBENCH_PROTOCOL},
 * one of http1 (the default), https (HTTP/1.1 over TLS 1.3), h2 (HTTP/2 over TLS 1.3 by ALPN) or h2c (HTTP/2 in
 * clear text, prior knowledge). The run's certificate and PKCS #8 key, PEM, are mounted read-only in
 * {@link #TLS_DIR}. Every app reads them here; how it serves them is its framework's own.
 */
public enum Protocol {
    HTTP1("http1"), HTTPS("https"), H2("h2"), H2C("h2c");

    public static final Path TLS_DIR = Path.of("/run/iotbench/tls");
    public static final Path CERT = TLS_DIR.resolve("cert.pem");
    public static final Path KEY = TLS_DIR.resolve("key.pem");
    /** The one TLS version every target serves. */
    public static final String TLS_VERSION = "TLSv1.3";

    private final String name;

    Protocol(String name) {
        this.name = name;
    }

    @Override
    public String toString() {
        return name;
    }

    public boolean tls() {
        return this == HTTPS || this == H2;
    }

    public boolean http2() {
        return this == H2 || this == H2C;
    }

    /** The protocol this process's environment asks for, one the app serves; anything else fails startup. */
    public static Protocol fromEnv(Set<Protocol> offered) {
        return parse(System.getenv("IOTBENCH_PROTOCOL"), offered);
    }

    static Protocol parse(String value, Set<Protocol> offered) {
        if (value == null || value.isEmpty()) {
            value = HTTP1.name;
        }
        for (Protocol p : values()) {
            if (p.name.equals(value)) {
                if (!offered.contains(p)) {
                    throw new IllegalArgumentException("IOTBENCH_PROTOCOL=" + value + ": this app serves "
                            + offered.stream().map(Protocol::toString).collect(Collectors.joining(", "))
                            + " (its README says why)");
                }
                return p;
            }
        }
        throw new IllegalArgumentException("IOTBENCH_PROTOCOL=" + value + ": give one of "
                + Arrays.stream(values()).map(Protocol::toString).collect(Collectors.joining(", ")));
    }

    /** Every protocol: what an app whose framework serves them all offers. */
    public static Set<Protocol> all() {
        return EnumSet.allOf(Protocol.class);
    }

    /**
     * Spring Boot's properties for this protocol (spring-mvc on Tomcat, spring-webflux on Reactor Netty), as
     * Boot's docs configure a server: the certificate as a PEM SSL bundle, TLS 1.3 only, and
     * {@code server.http2.enabled} for h2 (ALPN) and h2c (clear text when no bundle is set). Plain strings, so
     * this module stays framework-free; the apps pass them as default properties.
     */
    public Map<String, Object> springBootProperties() {
        Map<String, Object> p = new LinkedHashMap<>();
        if (tls()) {
            p.put("spring.ssl.bundle.pem.iotbench.keystore.certificate", "file:" + CERT);
            p.put("spring.ssl.bundle.pem.iotbench.keystore.private-key", "file:" + KEY);
            p.put("spring.ssl.bundle.pem.iotbench.options.enabled-protocols", TLS_VERSION);
            p.put("server.ssl.bundle", "iotbench");
        }
        p.put("server.http2.enabled", String.valueOf(http2()));
        return p;
    }

    /**
     * The run's certificate and key as an in-memory PKCS #12 key store under alias {@code iotbench}, for stacks
     * that take a KeyStore (Jetty, Ktor); the password only satisfies the API, nothing is written.
     */
    public static KeyStore keyStore(char[] password) throws IOException, GeneralSecurityException {
        return keyStore(CERT, KEY, password);
    }

    static KeyStore keyStore(Path cert, Path key, char[] password) throws IOException, GeneralSecurityException {
        Certificate[] chain;
        try (var in = Files.newInputStream(cert)) {
            chain = CertificateFactory.getInstance("X.509").generateCertificates(in).toArray(Certificate[]::new);
        }
        if (chain.length == 0) {
            throw new GeneralSecurityException(cert + " holds no certificate");
        }
        String pem = Files.readString(key);
        String body = pem.replaceAll("-----(BEGIN|END) PRIVATE KEY-----", "").replaceAll("\\s", "");
        PrivateKey pk = KeyFactory.getInstance(chain[0].getPublicKey().getAlgorithm())
                .generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(body)));
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setKeyEntry("iotbench", pk, password, chain);
        return ks;
    }
}
