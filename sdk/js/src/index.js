import { BucketMap, Sticky, bucketOf } from './bucketing.js';
import { Client, MissingApiKeyError } from './client.js';
import { ConfigSnapshot } from './config.js';
import { ModelCall } from './modelcall.js';
import { redact } from './redact.js';
import { sha256, sha256Pure } from './sha256.js';
import { VERSION } from './version.js';

export { BucketMap, Client, ConfigSnapshot, MissingApiKeyError, ModelCall, Sticky, VERSION, bucketOf, redact, sha256, sha256Pure };
