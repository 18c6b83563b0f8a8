// An OpenFeature provider (server SDK) over the expd client: an experiment is
// a flag; its string value is the user's variant and its object value the
// variant's variables. Every decision is the client's local one (no network
// call per evaluation); the exposure is recorded by an after-evaluation hook,
// so an evaluation whose value is thrown away by an error records nothing.
import {
  ErrorCode,
  FlagNotFoundError,
  ProviderNotReadyError,
  StandardResolutionReasons,
  TargetingKeyMissingError,
  TypeMismatchError,
} from '@openfeature/server-sdk';
import { Client } from 'expd';

/** OpenFeature's reason for each expd reason_code (docs/openfeature.md). */
export const REASONS = Object.freeze({
  bucketed: StandardResolutionReasons.SPLIT,
  pinned: StandardResolutionReasons.TARGETING_MATCH,
  not_targeted: StandardResolutionReasons.DEFAULT,
  holdout: StandardResolutionReasons.DEFAULT,
  layer: StandardResolutionReasons.DEFAULT,
  not_running: StandardResolutionReasons.DISABLED,
  shipped: StandardResolutionReasons.STATIC,
});

const READY_TIMEOUT_MS = 10_000;

export class ExpdProvider {
  /**
   * client: an expd Client (the provider does not close it), or the options
   * to build one (then the provider owns it and closes it on shutdown).
   * readyTimeoutMs: how long initialize waits for the first config.
   */
  constructor(client, { readyTimeoutMs = READY_TIMEOUT_MS } = {}) {
    this.ownsClient = !(client instanceof Client);
    this.client = this.ownsClient ? new Client(client ?? {}) : client;
    this.readyTimeoutMs = readyTimeoutMs;
    this.metadata = { name: 'expd' };
    this.runsOn = 'server';
    const provider = this;
    this.hooks = [{
      // Recorded only once the SDK hands the value to the caller, and only for
      // users the experiment counts (the client's exposure rule).
      after(hookContext, details) {
        provider.recordExposure(hookContext.flagKey, hookContext.context, details);
      },
    }];
  }

  async initialize() {
    if (!(await this.client.waitUntilReady(this.readyTimeoutMs))) {
      throw new ProviderNotReadyError('expd: no config loaded (server down or key refused)');
    }
  }

  async onClose() {
    if (this.ownsClient) await this.client.close();
  }

  async resolveStringEvaluation(flagKey, _defaultValue, context) {
    const decision = this.decide(flagKey, context);
    return this.details(decision, decision.variant);
  }

  async resolveObjectEvaluation(flagKey, defaultValue, context) {
    const decision = this.decide(flagKey, context);
    const variables = this.client.experimentOf(flagKey)?.variablesOf(decision.variant) ?? null;
    // A variant without variables answers the caller's default, as getVariables does.
    return this.details(decision, variables ?? defaultValue);
  }

  async resolveBooleanEvaluation(flagKey) {
    throw new TypeMismatchError(`expd: ${flagKey} is an experiment: read it as a string (the variant) or an object (its variables)`);
  }

  async resolveNumberEvaluation(flagKey) {
    throw new TypeMismatchError(`expd: ${flagKey} is an experiment: read it as a string (the variant) or an object (its variables)`);
  }

  /** The client's decision for the context's targeting key; throws OpenFeature's errors. */
  decide(flagKey, context) {
    if (!this.client.ready) throw new ProviderNotReadyError('expd: config not loaded yet');
    const user = context?.targetingKey;
    if (typeof user !== 'string' || user === '') throw new TargetingKeyMissingError('expd: the evaluation context needs a targetingKey (the user id)');
    const decision = this.client.peekDetail(flagKey, user, attributesOf(context));
    if (decision === null) throw new FlagNotFoundError(`expd: no experiment ${flagKey} in the config`);
    return decision;
  }

  details(decision, value) {
    return {
      value,
      variant: decision.variant,
      reason: REASONS[decision.reasonCode] ?? StandardResolutionReasons.UNKNOWN,
      flagMetadata: { inExperiment: decision.inExperiment, reasonCode: decision.reasonCode },
    };
  }

  recordExposure(flagKey, context, details) {
    if (details?.errorCode !== undefined && details.errorCode !== null) return;
    if (details?.flagMetadata?.inExperiment !== true) return;
    const user = context?.targetingKey;
    if (typeof user === 'string' && user !== '') this.client.assignDetail(flagKey, user, attributesOf(context));
  }
}

/** The evaluation context without its targeting key: the user's attributes for targeting. */
export function attributesOf(context) {
  if (context === undefined || context === null) return {};
  const { targetingKey: _user, ...attributes } = context;
  return attributes;
}

export { ErrorCode };
