// GET /signals (docs/contract.md, "Signals"): how the runtime is doing, on a port of its own
// (SIGNALS_PORT), from a plain node:http server that is not the framework serving the load: a read
// goes through no router, middleware or request queue of the app (on one event loop it still waits for
// the task running when it comes). Node and Bun run the same code; what a runtime cannot tell is null,
// with the reason in `unavailable`. A read costs a few counters the runtime keeps anyway (README.md,
// "Signals", gives its measured cost).
//
// One sampler per process, made only when SIGNALS_PORT is set: nothing is observed otherwise. Pools
// register themselves (registerPool): fanout.js its semaphore, db.js pg's Pool, an app its own. Under
// node:cluster the workers do not listen: the primary serves /signals and asks them over IPC.
import cluster from 'node:cluster';
import http from 'node:http';
import { performance, PerformanceObserver } from 'node:perf_hooks';

import { setting } from './settings.js';

export const SCHEMA = 1;
export const RUNTIME = process.versions.bun ? 'bun' : 'node';
/** The event-loop delay's sampling period, ms. */
export const DELAY_RESOLUTION_MS = 20;
/** How long the cluster primary waits for its workers' answers before it answers with the last ones. */
const CLUSTER_ASK_MS = 250;
const TAG = 'iotbenchSignals';

const RUNTIME_NAME = process.versions.bun ? `Bun ${process.versions.bun}` : `Node ${process.versions.node}`;
// Members no JavaScript runtime here can tell.
const ALWAYS_NULL = {
  jitMs:
    RUNTIME === 'bun'
      ? "JavaScriptCore's compile time is per function (bun:jsc totalCompileTime), with no process total"
      : 'V8 keeps no cumulative compile time that a process can read (only --cpu-prof and tracing)',
  safepoint: 'a JVM notion: a JavaScript thread stops only for its collector (gc)',
  threads: 'no monitors to block on in JavaScript; the OS threads (V8 or JavaScriptCore helpers, libuv) do not serve requests',
};

/** SIGNALS_PORT, or null when unset: no signals port then. 0 takes any free port (tests). */
export function signalsPort(env = process.env) {
  return setting(env, 'SIGNALS_PORT', null, 0, 65_535, 'the port of GET /signals (docs/contract.md, "Signals"), or leave it unset');
}

// ---- pools: registered whether or not signals are on (a registration is one Map entry) ----
const pools = new Map();
const poolsUnavailable = new Map();

/**
 * A pool that bounds concurrent work: read() answers { size, busy, waiting } now (waiting null where
 * the pool does not count its waiters). A later registration of the same name replaces it.
 */
export function registerPool(name, kind, read) {
  pools.set(name, { kind, read });
}

/** A pool this runtime cannot read, and why: listed in `unavailable` as "pools.<name>". */
export function poolUnavailable(name, why) {
  poolsUnavailable.set(`pools.${name}`, why);
}

/**
 * The event loop's delay since the previous read, ms: a timer of DELAY_RESOLUTION_MS measures how late
 * it fires (the loop was busy: a task, a collection; Node's timers add up to 1 ms of rounding), into a
 * ring of its latest 1,024 samples (20 s) and an exact maximum; a read answers their p99 and maximum and restarts them. monitorEventLoopDelay is not
 * used: Node's reset() forgets the time of its previous tick, so the period around each read goes
 * unrecorded (a 200 ms block right after a read showed as 10.6 ms), and a read may come right after the
 * block it should report; Bun's (1.4) keeps it but is one histogram shared by the process. This timer
 * is the same code on both runtimes. Cost: 50 callbacks a second (README.md, "Signals").
 */
export class LoopDelay {
  #samples = new Float64Array(1024);
  #n = 0;
  #max = 0;

  /** source 'manual': no timer, samples come from record() (tests). */
  constructor({ source = 'timer', resolution = DELAY_RESOLUTION_MS } = {}) {
    if (source === 'manual') return;
    let due = performance.now() + resolution;
    setInterval(() => {
      const now = performance.now();
      this.record(Math.max(0, now - due));
      due = now + resolution;
    }, resolution).unref();
  }

  /** One lateness, ms. */
  record(ms) {
    this.#samples[this.#n++ % this.#samples.length] = ms;
    if (ms > this.#max) this.#max = ms;
  }

  /** { p99, max } since the previous read, ms; restarts them. */
  read() {
    const n = Math.min(this.#n, this.#samples.length);
    let p99 = 0;
    if (n > 0) {
      const sorted = this.#samples.slice(0, n).sort();
      p99 = sorted[Math.ceil(0.99 * n) - 1];
    }
    const max = this.#max;
    this.#n = 0;
    this.#max = 0;
    return { p99, max };
  }
}

/**
 * This process's counters: CPU, GC, its event loop, its pools.
 * read() answers the contract's members for this process and restarts the "since the previous read"
 * values.
 */
export class Sampler {
  #gc = null;
  #delay;

  constructor() {
    if (PerformanceObserver.supportedEntryTypes?.includes('gc')) {
      // Every 'gc' entry on Node is a pause of the JavaScript thread: the time between V8's GC prologue
      // and epilogue callbacks (a scavenge, a mark-compact's atomic pause, incremental marking's
      // finalization, weak callbacks). Concurrent marking and sweeping on helper threads, and the small
      // incremental marking steps between tasks, make no entry.
      const gc = { count: 0, pauseMs: 0, maxPauseMs: 0 };
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) {
          gc.count++;
          gc.pauseMs += entry.duration;
          if (entry.duration > gc.maxPauseMs) gc.maxPauseMs = entry.duration;
        }
      }).observe({ entryTypes: ['gc'] });
      this.#gc = gc;
    }
    this.#delay = new LoopDelay();
  }

  /** The members of this process (schema, runtime and the always-null ones aside). */
  read() {
    const unavailable = {};
    const cpu = process.cpuUsage();
    let gc = null;
    if (this.#gc) {
      gc = { count: this.#gc.count, pauseMs: round(this.#gc.pauseMs), maxPauseMs: round(this.#gc.maxPauseMs) };
      this.#gc.maxPauseMs = 0;
    } else {
      unavailable.gc = `${RUNTIME_NAME} makes no 'gc' performance entries and no API counts its collections or pauses (bun:jsc: heap sizes only)`;
    }
    const delay = this.#delay.read();
    const elu = performance.eventLoopUtilization();
    let activeMs = null;
    let idleMs = null;
    if (elu.active + elu.idle > 0) {
      activeMs = round(elu.active);
      idleMs = round(elu.idle);
    } else {
      const why = `performance.eventLoopUtilization() reads zero on ${RUNTIME_NAME}`;
      unavailable['eventLoop.activeMs'] = why;
      unavailable['eventLoop.idleMs'] = why;
    }
    const eventLoop = { activeMs, idleMs, delayP99Ms: round(delay.p99), delayMaxMs: round(delay.max) };
    const poolList = [];
    for (const [name, { kind, read }] of pools) {
      const { size, busy, waiting } = read();
      poolList.push({ name, kind, size, busy: Math.max(0, Math.min(busy, size)), waiting: waiting ?? null });
    }
    for (const [key, why] of poolsUnavailable) unavailable[key] = why;
    return { cpuMs: round((cpu.user + cpu.system) / 1000), gc, eventLoop, pools: poolList, unavailable };
  }
}

/** The whole answer of a process that is not a cluster's primary. */
export function answer(sampler) {
  const own = sampler.read();
  return {
    schema: SCHEMA,
    runtime: RUNTIME,
    cpuMs: own.cpuMs,
    gc: own.gc,
    jitMs: null,
    safepoint: null,
    eventLoop: own.eventLoop,
    threads: null,
    pools: own.pools,
    unavailable: { ...ALWAYS_NULL, ...own.unavailable },
  };
}

/**
 * Starts GET /signals when SIGNALS_PORT is set, on BIND_ADDRESS (127.0.0.1 by default); resolves to
 * the listening server, or null when unset. A node:cluster worker does not listen: it answers its
 * primary's asks over IPC. A cluster's primary passes { cluster: { workers } } (how many it forks)
 * and answers for them all (README.md, "Signals").
 */
export async function startSignals(options = {}) {
  const env = options.env ?? process.env;
  const port = signalsPort(env);
  if (port === null) return null;
  if (cluster.isWorker) {
    const sampler = new Sampler();
    process.on('message', (message) => {
      if (message?.[TAG] === 'read') process.send({ [TAG]: sampler.read() });
    });
    return null;
  }
  const read = options.cluster ? clusterReader(options.cluster.workers) : ((sampler) => async () => answer(sampler))(new Sampler());
  const server = http.createServer((request, response) => {
    const path = request.url.split('?', 1)[0];
    if (path !== '/signals') return send(response, 404, { error: `no route ${request.method} ${path}: GET /signals` });
    if (request.method !== 'GET') return send(response, 405, { error: 'GET /signals only' });
    read().then(
      (body) => send(response, 200, body),
      (error) => send(response, 500, { error: String(error?.message ?? error) }),
    );
  });
  const host = env.BIND_ADDRESS || '127.0.0.1';
  await new Promise((resolve, reject) => {
    server.once('error', (error) => reject(new Error(`SIGNALS_PORT=${port}: cannot listen on ${host}:${port}: ${error.message}`)));
    server.listen(port, host, resolve);
  });
  return server;
}

function send(response, status, body) {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  response.end(text);
}

function round(ms) {
  return Math.round(ms * 1000) / 1000;
}

// ---- node:cluster: the primary answers for its workers ----

/**
 * The primary's reader: it asks every live worker for its members, waits at most CLUSTER_ASK_MS for
 * the answers (a worker whose loop is blocked answers late: its previous figures stand in, and its
 * late maxima count at the next read), and sums them: cpuMs is the primary's and the workers'; gc and
 * eventLoop are the workers' (the primary serves no request): counts, pauses, active and idle summed,
 * maxima and p99 the worst; pools of the same name summed over the workers; and a `workers` pool:
 * size the workers forked, busy the workers' loops busy since the previous read (the sum of their
 * utilizations, rounded), waiting null (the kernel's and the primary's accept queues are not counted).
 */
function clusterReader(size) {
  const state = new Map(); // worker id → { last, gcMax, delayP99, delayMax, loopAtRead }
  const retired = { cpuMs: 0, gcCount: 0, gcPauseMs: 0, activeMs: 0, idleMs: 0 };
  let waiters = [];
  cluster.on('message', (worker, message) => {
    const reading = message?.[TAG];
    if (!reading || typeof reading !== 'object') return;
    const s = state.get(worker.id) ?? { gcMax: 0, delayP99: 0, delayMax: 0, loopAtRead: null };
    s.last = reading;
    s.gcMax = Math.max(s.gcMax, reading.gc?.maxPauseMs ?? 0);
    s.delayP99 = Math.max(s.delayP99, reading.eventLoop.delayP99Ms);
    s.delayMax = Math.max(s.delayMax, reading.eventLoop.delayMaxMs);
    state.set(worker.id, s);
    for (const w of waiters) w();
  });
  cluster.on('exit', (worker) => {
    const last = state.get(worker.id)?.last;
    state.delete(worker.id);
    if (!last) return;
    retired.cpuMs += last.cpuMs;
    retired.gcCount += last.gc?.count ?? 0;
    retired.gcPauseMs += last.gc?.pauseMs ?? 0;
    retired.activeMs += last.eventLoop.activeMs ?? 0;
    retired.idleMs += last.eventLoop.idleMs ?? 0;
  });

  return async () => {
    const live = Object.values(cluster.workers).filter((w) => w.isConnected());
    const asked = new Map(live.map((w) => [w.id, state.get(w.id)?.last]));
    await new Promise((resolve) => {
      const timer = setTimeout(done, CLUSTER_ASK_MS);
      const check = () => {
        for (const [id, before] of asked) if (state.get(id)?.last === before) return;
        done();
      };
      function done() {
        clearTimeout(timer);
        waiters = waiters.filter((w) => w !== check);
        resolve();
      }
      waiters.push(check);
      for (const w of live) w.send({ [TAG]: 'read' });
      if (live.length === 0) done();
    });

    const cpu = process.cpuUsage();
    let cpuMs = retired.cpuMs + (cpu.user + cpu.system) / 1000;
    let gc = { count: retired.gcCount, pauseMs: retired.gcPauseMs, maxPauseMs: 0 };
    const loop = { activeMs: retired.activeMs, idleMs: retired.idleMs, delayP99Ms: 0, delayMaxMs: 0 };
    let loopsKnown = true;
    let busyLoops = 0;
    const sums = new Map();
    const unavailable = { ...ALWAYS_NULL };
    for (const s of state.values()) {
      const r = s.last;
      cpuMs += r.cpuMs;
      if (r.gc && gc) {
        gc.count += r.gc.count;
        gc.pauseMs += r.gc.pauseMs;
        gc.maxPauseMs = Math.max(gc.maxPauseMs, s.gcMax);
      } else gc = null;
      loop.delayP99Ms = Math.max(loop.delayP99Ms, s.delayP99);
      loop.delayMaxMs = Math.max(loop.delayMaxMs, s.delayMax);
      s.gcMax = s.delayP99 = s.delayMax = 0;
      const { activeMs, idleMs } = r.eventLoop;
      if (activeMs === null || idleMs === null) loopsKnown = false;
      else {
        loop.activeMs += activeMs;
        loop.idleMs += idleMs;
        const before = s.loopAtRead ?? { activeMs: 0, idleMs: 0 };
        const wall = activeMs - before.activeMs + (idleMs - before.idleMs);
        if (wall > 0) busyLoops += (activeMs - before.activeMs) / wall;
        s.loopAtRead = { activeMs, idleMs };
      }
      for (const p of r.pools) {
        const sum = sums.get(p.name);
        if (!sum) sums.set(p.name, { ...p });
        else {
          sum.size += p.size;
          sum.busy += p.busy;
          sum.waiting = sum.waiting === null || p.waiting === null ? null : sum.waiting + p.waiting;
        }
      }
      Object.assign(unavailable, r.unavailable);
    }
    if (!gc) unavailable.gc ??= 'a worker could not tell its collections';
    if (!loopsKnown) {
      loop.activeMs = loop.idleMs = null;
      unavailable['eventLoop.activeMs'] ??= 'a worker could not tell its loop';
      unavailable['eventLoop.idleMs'] ??= 'a worker could not tell its loop';
    }
    const workers = { name: 'workers', kind: 'workers', size, busy: Math.min(size, Math.round(busyLoops)), waiting: null };
    unavailable['pools.workers.waiting'] = "connections waiting for a worker are not counted (the primary's and the kernel's accept queues)";
    return {
      schema: SCHEMA,
      runtime: RUNTIME,
      cpuMs: round(cpuMs),
      gc: gc && { count: gc.count, pauseMs: round(gc.pauseMs), maxPauseMs: round(gc.maxPauseMs) },
      jitMs: null,
      safepoint: null,
      eventLoop: {
        activeMs: loop.activeMs === null ? null : round(loop.activeMs),
        idleMs: loop.idleMs === null ? null : round(loop.idleMs),
        delayP99Ms: round(loop.delayP99Ms),
        delayMaxMs: round(loop.delayMaxMs),
      },
      threads: null,
      pools: [workers, ...sums.values()],
      unavailable,
    };
  };
}
