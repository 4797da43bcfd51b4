// The protocol iotbench asks a target to serve on its port (docs/protocols.md): IOTBENCH_PROTOCOL,
// one of http1 (the default), https (HTTP/1.1 over TLS 1.3), h2 (HTTP/2 over TLS 1.3 by ALPN) or
// h2c (HTTP/2 in clear text, prior knowledge); the run's certificate and key, PEM, are mounted
// read-only in TLS_DIR. Every app reads them here; how it serves them is its framework's own.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';

export const PROTOCOLS = ['http1', 'https', 'h2', 'h2c'];
export const TLS_DIR = '/run/iotbench/tls';

/**
 * The protocol asked for, checked against those this app serves (its image's iotbench.protocols
 * label says the same): anything else stops the app at startup with what it serves.
 */
export function servedProtocol(offered, env = process.env) {
  const p = env.IOTBENCH_PROTOCOL || 'http1';
  if (!PROTOCOLS.includes(p)) throw new Error(`IOTBENCH_PROTOCOL=${p}: give one of ${PROTOCOLS.join(', ')}`);
  if (!offered.includes(p)) throw new Error(`IOTBENCH_PROTOCOL=${p}: this app serves ${offered.join(', ')} (its README says why)`);
  return p;
}

/** Whether p runs over TLS. */
export const isTls = (p) => p === 'https' || p === 'h2';

/**
 * Node's TLS options for the run's certificate: TLS 1.3 only (its cipher suites are all AEAD and
 * need no list), the rest Node's defaults. Read once, at startup.
 */
export function tlsOptions(dir = TLS_DIR) {
  return { cert: readFileSync(`${dir}/cert.pem`), key: readFileSync(`${dir}/key.pem`), minVersion: 'TLSv1.3' };
}

/**
 * A node: server for a request listener (an Express app, Koa's app.callback()) serving p: node:http,
 * node:https, or node:http2's secure server (ALPN h2, HTTP/1.1 still answered: allowHTTP1, as in
 * production) or its clear-text one (h2c, prior knowledge).
 */
export function nodeServer(p, listener) {
  switch (p) {
    case 'https':
      return https.createServer(tlsOptions(), listener);
    case 'h2':
      return http2.createSecureServer({ ...tlsOptions(), allowHTTP1: true }, listener);
    case 'h2c':
      return http2.createServer(listener);
    default:
      return http.createServer(listener);
  }
}

/**
 * Fastify's server options for p (fastify, and nestjs's Fastify adapter): Fastify makes the node:
 * server itself from them. h2 keeps answering HTTP/1.1 on the same port (allowHTTP1), as a
 * production server does for clients without ALPN h2.
 */
export function fastifyProtocolOptions(p) {
  switch (p) {
    case 'https':
      return { https: tlsOptions() };
    case 'h2':
      return { http2: true, https: { ...tlsOptions(), allowHTTP1: true } };
    case 'h2c':
      return { http2: true };
    default:
      return {};
  }
}
