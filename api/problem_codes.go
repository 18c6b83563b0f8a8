package api

// Problem codes: the stable, machine-readable `code` of every problem the
// API answers (and the last segment of its `type`). Clients switch on
// them, so a code is never renamed or reused; docs/problems.md lists each
// with its status and meaning. Every new code is added here and there.
const (
	// Request shape.
	CodeValidationFailed  = "validation_failed"  // 400: fields failed validation (errors lists them)
	CodeInvalidTransition = "invalid_transition" // 409: the experiment's lifecycle status does not allow the change (errors names the field)
	CodeMalformedJSON     = "malformed_json"     // 400: body is not one JSON object of the right shape
	CodeBodyTooLarge      = "body_too_large"     // 413: body over the route's limit
	CodeHeadersTooLarge   = "headers_too_large"  // 431: request line and headers over MaxHeaderBytes
	CodeRouteNotFound     = "route_not_found"    // 404: no such route
	CodeMethodNotAllowed  = "method_not_allowed" // 405: route exists, method does not

	// Credentials.
	CodeUnauthorized     = "unauthorized"       // 401: missing or invalid session token or API key
	CodeAdminRequired    = "admin_required"     // 403: org admins only
	CodeOriginNotAllowed = "origin_not_allowed" // 403: CORS preflight from an origin not in EXPD_DASHBOARD_ORIGINS
	// 403: management tokens are created from an identity session only
	CodeIdentitySessionRequired = "identity_session_required"
	CodeInvalidSignature        = "invalid_signature" // 401: signed delivery with a missing, invalid or stale signature
	CodeMalformedEvent          = "malformed_event"   // 400: signed delivery whose payload cannot be read
	// 403: a publishable key sent a judge or code score (errors names each)
	CodeSecretKeyRequired = "secret_key_required"

	// Limits.
	CodeRateLimited            = "rate_limited"             // 429: per-org SDK rate limit; Retry-After
	CodeEventAllowanceExceeded = "event_allowance_exceeded" // 429: plan's monthly event allowance used up; Retry-After

	// Resources.
	CodeExperimentNotFound   = "experiment_not_found"   // 404
	CodeRunNotFound          = "run_not_found"          // 404
	CodeResultsCollecting    = "results_collecting"     // 404 with hint "collecting": no results computed yet
	CodeNoPublishableKey     = "no_publishable_key"     // 404: the org has no live publishable key
	CodeNameTaken            = "name_taken"             // 400: experiment name already used in the org
	CodeVersionMismatch      = "version_mismatch"       // 412: If-Match names a version that is no longer current
	CodeUnsupportedMediaType = "unsupported_media_type" // 415: PATCH without Content-Type application/merge-patch+json
	// 404: unknown management token id, or another org's
	CodeManagementTokenNotFound = "management_token_not_found"
	CodeRunInProgress           = "run_in_progress"      // 409: a run of this nightly day is running; start again once it ended
	CodeBackfillInProgress      = "backfill_in_progress" // 409: this day range is being backfilled

	// Outbound webhooks.
	CodeWebhookEndpointNotFound = "webhook_endpoint_not_found" // 404: no such endpoint in the org (or deleted)
	CodeWebhookEndpointLimit    = "webhook_endpoint_limit"     // 409: the org already has the most endpoints allowed

	// Layers and holdouts (docs/targeting.md).
	CodeLayerNotFound   = "layer_not_found"   // 404: no such layer in the org
	CodeHoldoutNotFound = "holdout_not_found" // 404: no such holdout in the org

	// Online evaluators.
	CodeEvaluatorNotFound    = "evaluator_not_found"    // 404: no such evaluator in the org (or deleted)
	CodePayloadNotKept       = "payload_not_kept"       // 409: an LLM judge where the payload policy (hash, drop) keeps no text
	CodeSecretsNotConfigured = "secrets_not_configured" // 409: the server has no EXPD_SECRETS_KEY to seal a judge's api_key or a signing secret, to key an erasure, or for the hash payload policy

	// Privacy (docs/privacy.md).
	CodeErasureNotFound = "erasure_not_found" // 404: no such erasure in the org

	// Billing.
	CodeBillingNotConfigured = "billing_not_configured" // 409: this server has no payment provider
	CodeNoBillingAccount     = "no_billing_account"     // 409: the org never subscribed
	CodeSubscriptionExists   = "subscription_exists"    // 409: the org already has a subscription
	CodePaymentProviderError = "payment_provider_error" // 502: the payment provider failed

	// Server and dependencies.
	CodeInternal             = "internal"              // 500: quote request_id when reporting
	CodeDatabaseUnavailable  = "database_unavailable"  // 503: database unreachable; Retry-After
	CodeStorageUnavailable   = "storage_unavailable"   // 503: events not stored; retry with the same event ids
	CodeWorkflowsUnavailable = "workflows_unavailable" // 503: Temporal unreachable or not connected
	CodeKeyRotationTimeout   = "key_rotation_timeout"  // 503: rotation did not finish in time; rotate again
	CodeNotReady             = "not_ready"             // 503 from /readyz: a dependency is unreachable
)
