// GET /fanout (docs/contract.md, "The fan-out executor"): seed 002's 500 ms of blocking as ten 50 ms
// sub-tasks joined on one bounded executor. In an event loop a worker is a slot: each sub-task holds a
// permit of one process-wide semaphore of FANOUT_POOL permits for its wait.
import { setting } from './settings.js';
import { registerPool } from './signals.js';
import { sleep } from './work.js';

export const FANOUT_TASKS = 10;
export const FANOUT_TASK_MS = 50;

/** The executor's workers: FANOUT_POOL, 10 by default. */
export function fanoutPool(env = process.env) {
  return setting(env, 'FANOUT_POOL', 10, 1, 10_000, "the fan-out executor's workers");
}

/** Permits handed out in the order they were asked for. */
export class Semaphore {
  #free;
  #waiting = [];
  constructor(permits) {
    this.#free = permits;
    this.permits = permits;
  }
  /** Permits held now. */
  get held() {
    return this.permits - this.#free;
  }
  /** Acquirers queued now. */
  get queued() {
    return this.#waiting.length;
  }
  acquire() {
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }
  release() {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#free++;
  }
}

// The process's one executor, made when an app imports this module: a bad FANOUT_POOL stops the app at
// startup, not at its first /fanout.
const executor = new Semaphore(fanoutPool());
// GET /signals' pool `fanout` (docs/contract.md, "Signals"): kind `workers`, as an executor's workers
// are (in an event loop a worker is a permit).
registerPool('fanout', 'workers', () => ({ size: executor.permits, busy: executor.held, waiting: executor.queued }));

/** Runs the ten sub-tasks on the process's executor and answers once all have ended. */
export async function fanOut(wait = sleep) {
  const task = async () => {
    await executor.acquire();
    try {
      await wait(FANOUT_TASK_MS);
    } finally {
      executor.release();
    }
  };
  await Promise.all(Array.from({ length: FANOUT_TASKS }, task));
  return { tasks: FANOUT_TASKS, waitedMs: FANOUT_TASKS * FANOUT_TASK_MS };
}
