// Node built-ins, loaded when the runtime has them (Node, Bun, Deno, edge
// runtimes with Node compatibility) and left null elsewhere, so the package
// also runs where only fetch and Web Crypto exist.
// The CommonJS build replaces this file's loader with require() calls
// (scripts/build-cjs.mjs).

async function optional(name) {
  try {
    return await import(name);
  } catch {
    return null;
  }
}

export const nodeCrypto = await optional('node:crypto');
export const nodeAsyncHooks = await optional('node:async_hooks');
export const nodeFs = await optional('node:fs');
// The application's OpenTelemetry API, when it has one (baggage.js).
export const otelApi = await optional('@opentelemetry/api');
