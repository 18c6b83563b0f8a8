import type { EvaluationContext, JsonValue, Provider, ResolutionDetails, Hook } from '@openfeature/server-sdk';
import type { Client, ClientOptions } from 'expd';

/** OpenFeature's reason for each expd reason_code. */
export declare const REASONS: Readonly<Record<string, string>>;

export interface ExpdProviderOptions {
  /** How long initialize waits for the first config (ms, default 10000). */
  readyTimeoutMs?: number;
}

/** Experiments as flags: the variant as a string flag, its variables as an object flag. */
export declare class ExpdProvider implements Provider {
  constructor(client: Client | ClientOptions, options?: ExpdProviderOptions);
  readonly metadata: { name: 'expd' };
  readonly runsOn: 'server';
  readonly hooks: Hook[];
  readonly client: Client;
  initialize(): Promise<void>;
  onClose(): Promise<void>;
  resolveStringEvaluation(flagKey: string, defaultValue: string, context: EvaluationContext): Promise<ResolutionDetails<string>>;
  resolveObjectEvaluation<T extends JsonValue>(flagKey: string, defaultValue: T, context: EvaluationContext): Promise<ResolutionDetails<T>>;
  resolveBooleanEvaluation(flagKey: string, defaultValue: boolean, context: EvaluationContext): Promise<ResolutionDetails<boolean>>;
  resolveNumberEvaluation(flagKey: string, defaultValue: number, context: EvaluationContext): Promise<ResolutionDetails<number>>;
}

/** The evaluation context without its targeting key. */
export declare function attributesOf(context: EvaluationContext | undefined): Record<string, unknown>;
