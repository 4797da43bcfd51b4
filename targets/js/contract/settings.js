// A setting from the environment: a whole number within bounds, or the default when unset; anything
// else stops the app at startup with what to give.
export function setting(env, name, unset, min, max, what) {
  const raw = env[name];
  if (raw === undefined || raw === '') return unset;
  const n = /^\d{1,10}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= min && n <= max)) throw new Error(`${name}=${raw}: give ${what}, ${min} to ${max}`);
  return n;
}
