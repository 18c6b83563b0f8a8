import { nodeAsyncHooks } from './platform.js';

// The per-request user binding behind Client.asUser: AsyncLocalStorage from
// node:async_hooks or the runtime's global (edge runtimes), so the binding
// follows awaits. Without either, the binding holds for the synchronous part
// of the callback only.

const Storage = nodeAsyncHooks?.AsyncLocalStorage ?? globalThis.AsyncLocalStorage ?? null;
const storage = Storage ? new Storage() : null;
let syncUser = null;

/** Run fn with userId bound; returns fn's result (a promise stays bound while it runs). */
export function bindUser(userId, fn) {
  if (storage !== null) return storage.run(userId, fn);
  const previous = syncUser;
  syncUser = userId;
  try {
    return fn();
  } finally {
    syncUser = previous;
  }
}

/** The user bound by the innermost asUser, or null. */
export function currentUser() {
  return storage !== null ? storage.getStore() ?? null : syncUser;
}
