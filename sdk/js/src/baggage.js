import { otelApi } from './platform.js';

// W3C baggage for OpenTelemetry GenAI spans (docs/ingest.md, "OTLP traces").
// Inside asUser, where the application already has @opentelemetry/api, the
// active context carries expd.user and, when asUser names an experiment the
// user is in, expd.experiment and expd.variant; a baggage span processor
// copies them onto the spans of the application's own GenAI
// instrumentation, which POST /v1/traces then attributes. Without the API,
// fn runs as it is: the client adds no dependency.

export const BAGGAGE_USER = 'expd.user';
export const BAGGAGE_EXPERIMENT = 'expd.experiment';
export const BAGGAGE_VARIANT = 'expd.variant';

/** Run fn in the active OpenTelemetry context with entries ([key, value] pairs) added to its baggage. */
export function withBaggage(entries, fn, api = otelApi) {
  if (api === null || typeof api.context?.with !== 'function') return fn();
  const { context, propagation } = api;
  const active = context.active();
  let bag = propagation.getBaggage(active) ?? propagation.createBaggage();
  for (const [key, value] of entries) bag = bag.setEntry(key, { value });
  return context.with(propagation.setBaggage(active, bag), fn);
}
