// Types of protocol.js for the TypeScript app (nestjs).
export const PROTOCOLS: readonly string[];
export const TLS_DIR: string;
export function servedProtocol(offered: readonly string[], env?: Record<string, string | undefined>): string;
export function isTls(p: string): boolean;
export function tlsOptions(dir?: string): { cert: Buffer; key: Buffer; minVersion: 'TLSv1.3' };
export function nodeServer(p: string, listener: (...args: any[]) => void): import('node:net').Server;
export function fastifyProtocolOptions(p: string): Record<string, unknown>;
