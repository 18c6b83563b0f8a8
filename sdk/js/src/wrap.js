import { ModelCall } from './modelcall.js';
import { StreamReader, modelOf, promptText, responseText, usageOf } from './shapes.js';
import { currentUser } from './user.js';

// Client.wrap: a transparent Proxy of an OpenAI-style client (the official
// `openai` package and clients of the same shape). chat.completions.create,
// responses.create, completions.create and embeddings.create are measured;
// everything else is the provider's own. A call inside client.asUser records
// an exposure and a model_call; outside one it passes through unrecorded.

const INSTRUMENTED = new Set(['chat.completions.create', 'responses.create', 'completions.create', 'embeddings.create']);
const PREFIXES = new Set(['chat', 'chat.completions', 'responses', 'completions', 'embeddings']);

function bound(target, value) {
  // Provider classes may use #private fields, which a Proxy as `this` cannot reach.
  return typeof value === 'function' ? value.bind(target) : value;
}

export function wrapProvider(target, client, experiment, path = '') {
  return new Proxy(target, {
    get(t, prop) {
      const value = Reflect.get(t, prop, t);
      if (typeof prop !== 'string') return bound(t, value);
      const p = path ? `${path}.${prop}` : prop;
      if (INSTRUMENTED.has(p) && typeof value === 'function') return instrument(value.bind(t), client, experiment);
      if (PREFIXES.has(p) && value !== null && typeof value === 'object') return wrapProvider(value, client, experiment, p);
      return bound(t, value);
    },
  });
}

function instrument(method, client, experiment) {
  return function measured(...args) {
    const userId = currentUser();
    if (userId === null) return method(...args);
    const body = args[0];
    const call = new ModelCall(client, experiment, userId, {
      model: typeof body?.model === 'string' ? body.model : null,
      prompt: client.captureText ? promptText(body) : null,
    });
    const streaming = Boolean(body?.stream);
    call.start();
    let result;
    try {
      result = method(...args);
    } catch (err) {
      call.finish(err);
      throw err;
    }
    if (result !== null && typeof result?.then === 'function') {
      return result.then(
        (value) => observe(value, call, streaming, client.captureText),
        (err) => {
          call.finish(err);
          throw err;
        },
      );
    }
    return observe(result, call, streaming, client.captureText);
  };
}

function observe(result, call, streaming, captureText) {
  if (streaming && result !== null && typeof result?.[Symbol.asyncIterator] === 'function') {
    return measuredStream(result, call, captureText);
  }
  try {
    call.model = modelOf(result) ?? call.model;
    const usage = usageOf(result);
    if (usage !== null) call.setUsage(...usage);
    if (captureText) call.response = responseText(result);
  } catch {
    // an odd response shape must not break the caller
  }
  call.finish();
  return result;
}

/** The stream, passed through chunk by chunk, recorded when it ends, fails or is abandoned by break. */
function measuredStream(stream, call, captureText) {
  const reader = new StreamReader();
  const end = (error = null) => {
    if (call.finished) return;
    call.model = reader.model ?? call.model;
    if (reader.usage !== null) call.setUsage(...reader.usage);
    if (captureText) call.response = reader.text();
    call.finish(error);
  };
  const iterate = () => {
    const it = stream[Symbol.asyncIterator]();
    return {
      async next(...a) {
        let r;
        try {
          r = await it.next(...a);
        } catch (err) {
          end(err);
          throw err;
        }
        if (r.done) end();
        else {
          call.firstToken();
          try {
            reader.observe(r.value);
          } catch {
            // measuring must never break the stream
          }
        }
        return r;
      },
      async return(value) {
        end();
        return typeof it.return === 'function' ? it.return(value) : { done: true, value };
      },
      async throw(err) {
        end(err);
        if (typeof it.throw === 'function') return it.throw(err);
        throw err;
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  };
  return new Proxy(stream, {
    get(t, prop) {
      if (prop === Symbol.asyncIterator) return iterate;
      return bound(t, Reflect.get(t, prop, t));
    },
  });
}
