import { nodeAsyncHooks } from './platform.js';

// The per-request user binding behind Client.asUser: AsyncLocalStorage from
// node:async_hooks or the runtime's global (edge runtimes), so the binding
// follows awaits. Without either, the binding holds for the synchronous part
// of the callback only. The binding also remembers the id of the last model
// call measured inside it (Client.lastCallId); it is one object per asUser
// call, so calls in promises started inside count too.

const Storage = nodeAsyncHooks?.AsyncLocalStorage ?? globalThis.AsyncLocalStorage ?? null;
const storage = Storage ? new Storage() : null;
let syncBinding = null;

function current() {
  return storage !== null ? storage.getStore() ?? null : syncBinding;
}

/** Run fn with userId bound; returns fn's result (a promise stays bound while it runs). */
export function bindUser(userId, fn, attributes = null) {
  const binding = { userId, attributes, lastCallId: null };
  if (storage !== null) return storage.run(binding, fn);
  const previous = syncBinding;
  syncBinding = binding;
  try {
    return fn();
  } finally {
    syncBinding = previous;
  }
}

/** The user bound by the innermost asUser, or null. */
export function currentUser() {
  return current()?.userId ?? null;
}

/** The attributes bound with userId by the innermost asUser, or null. */
export function currentAttributes(userId) {
  const binding = current();
  return binding !== null && binding.userId === userId ? binding.attributes : null;
}

/** Remember callId as the innermost asUser's last model call (no-op outside one). */
export function noteCall(callId) {
  const binding = current();
  if (binding !== null) binding.lastCallId = callId;
}

/** The id of the last model call measured in the innermost asUser, or null. */
export function lastCallId() {
  return current()?.lastCallId ?? null;
}
