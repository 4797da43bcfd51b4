// GET /signals' shape and rules (docs/contract.md, "Signals"), on Node (`node --test contract/`) and
// on Bun (`bun test contract/signals.test.js`); the images' build stage runs both (README.md, "Signals").
// No timing is asserted: only the shape, counters that never go back, maxima that restart at a read.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import vm from 'node:vm';
import v8 from 'node:v8';

import { fanOut } from './fanout.js';
import { LoopDelay, registerPool, RUNTIME, signalsPort, startSignals } from './signals.js';

const MEMBERS = ['schema', 'runtime', 'cpuMs', 'gc', 'jitMs', 'safepoint', 'eventLoop', 'threads', 'pools', 'unavailable'];

let server;
let url;
before(async () => {
  server = await startSignals({ env: { SIGNALS_PORT: '0' } });
  url = `http://127.0.0.1:${server.address().port}/signals`;
});
after(() => {
  server.closeAllConnections?.();
  server.close();
});

async function read() {
  const response = await fetch(url);
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type'), /application\/json/);
  return response.json();
}

/** A collection, where the runtime lets a test ask for one. */
function collect() {
  if (typeof Bun !== 'undefined') return Bun.gc(true);
  v8.setFlagsFromString('--expose-gc');
  vm.runInNewContext('gc')();
}

test('SIGNALS_PORT: unset opens nothing, a bad value is refused naming the variable', async () => {
  assert.equal(signalsPort({}), null);
  assert.equal(signalsPort({ SIGNALS_PORT: '' }), null);
  assert.equal(signalsPort({ SIGNALS_PORT: '18181' }), 18181);
  for (const bad of ['x', '-1', '65536', '80 ', '1e3']) {
    assert.throws(() => signalsPort({ SIGNALS_PORT: bad }), new RegExp(`^Error: SIGNALS_PORT=${bad.replace(/[+.]/g, '\\$&')}: give the port of GET /signals`));
  }
  assert.equal(await startSignals({ env: {} }), null);
  await assert.rejects(startSignals({ env: { SIGNALS_PORT: 'eighty' } }), /SIGNALS_PORT=eighty/);
});

test('every member present, null only with a reason', async () => {
  const body = await read();
  assert.deepEqual(Object.keys(body).sort(), [...MEMBERS].sort());
  assert.equal(body.schema, 1);
  assert.equal(body.runtime, RUNTIME);
  assert.equal(typeof body.cpuMs, 'number');
  for (const member of MEMBERS) {
    if (body[member] === null) assert.equal(typeof body.unavailable[member], 'string', `${member} is null without a reason`);
  }
  if (body.gc !== null) assert.deepEqual(Object.keys(body.gc), ['count', 'pauseMs', 'maxPauseMs']);
  assert.deepEqual(Object.keys(body.eventLoop), ['activeMs', 'idleMs', 'delayP99Ms', 'delayMaxMs']);
  for (const [key, value] of Object.entries(body.eventLoop)) {
    if (value === null) assert.equal(typeof body.unavailable[`eventLoop.${key}`], 'string', `eventLoop.${key} is null without a reason`);
    else assert.ok(value >= 0, `eventLoop.${key} = ${value}`);
  }
  assert.equal(typeof body.eventLoop.delayP99Ms, 'number');
  // Node tells its collections and its loop's utilization; Bun 1.4 tells neither (README.md).
  if (RUNTIME === 'node') {
    assert.notEqual(body.gc, null);
    assert.notEqual(body.eventLoop.activeMs, null);
  }
  const fanout = body.pools.find((p) => p.name === 'fanout');
  assert.deepEqual(fanout, { name: 'fanout', kind: 'workers', size: 10, busy: 0, waiting: 0 });
});

test('counters never go back; the fan-out pool shows its permits held', async () => {
  const first = await read();
  // Two fan-outs, twenty sub-tasks whose waits end when the test says: ten hold the permits, ten queue.
  let release;
  const gate = new Promise((resolve) => (release = resolve));
  const running = Promise.all([fanOut(() => gate), fanOut(() => gate)]);
  const during = await read();
  assert.deepEqual(during.pools.find((p) => p.name === 'fanout'), { name: 'fanout', kind: 'workers', size: 10, busy: 10, waiting: 10 });
  release();
  await running;
  let junk = [];
  for (let i = 0; i < 200_000; i++) junk.push({ i });
  junk = null;
  collect();
  await new Promise((resolve) => setTimeout(resolve, 20));
  const second = await read();
  assert.ok(second.cpuMs >= first.cpuMs);
  if (first.gc) {
    assert.ok(second.gc.count > first.gc.count, 'a forced collection was not counted');
    assert.ok(second.gc.pauseMs >= first.gc.pauseMs);
  }
  if (first.eventLoop.activeMs !== null) {
    assert.ok(second.eventLoop.activeMs >= first.eventLoop.activeMs);
    assert.ok(second.eventLoop.idleMs >= first.eventLoop.idleMs);
  }
});

test('maxima restart at each read', async () => {
  collect();
  await new Promise((resolve) => setTimeout(resolve, 20));
  const first = await read();
  const second = await read();
  if (first.gc && second.gc.count === first.gc.count) {
    assert.equal(second.gc.maxPauseMs, 0, 'no collection since the previous read, yet a longest pause');
  }
  // A loop blocked for 200 ms shows at least half of it in the next read's maximum.
  const end = Date.now() + 200;
  while (Date.now() < end);
  await new Promise((resolve) => setTimeout(resolve, 30));
  const blocked = await read();
  assert.ok(blocked.eventLoop.delayMaxMs >= 100, `delayMaxMs ${blocked.eventLoop.delayMaxMs} after a 200 ms block`);
  assert.ok(blocked.eventLoop.delayP99Ms <= blocked.eventLoop.delayMaxMs);
  // The timer's drift (runtimes without monitorEventLoopDelay): p99 and max of its samples, restarted.
  const drift = new LoopDelay({ source: 'manual' });
  for (let i = 1; i <= 100; i++) drift.record(i === 100 ? 250 : i / 10);
  assert.deepEqual(drift.read(), { p99: 9.9, max: 250 });
  assert.deepEqual(drift.read(), { p99: 0, max: 0 });
  drift.record(3);
  assert.deepEqual(drift.read(), { p99: 3, max: 3 });
});

test('pools: busy within 0..size, waiting null when not counted; other paths are 404', async () => {
  registerPool('test-pool', 'connections', () => ({ size: 4, busy: 9, waiting: undefined }));
  const body = await read();
  assert.deepEqual(body.pools.find((p) => p.name === 'test-pool'), { name: 'test-pool', kind: 'connections', size: 4, busy: 4, waiting: null });
  assert.equal((await fetch(url.replace('/signals', '/health'))).status, 404);
  assert.equal((await fetch(url, { method: 'POST' })).status, 405);
});
