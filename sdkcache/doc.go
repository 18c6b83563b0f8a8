// Package sdkcache is each API instance's in-memory view of what the SDK
// routes (/v1/config, /v1/assign, /v1/events) read on every request: the
// org's config snapshot and plan, its live API keys, and assignment pins.
// The hot paths answer from it without touching the database.
//
// Freshness (docs/assignment.md): a cached org snapshot or key is trusted
// for at most MaxAge (1 s by default); the next request after that
// revalidates it with one indexed query (the org's config_version and plan;
// the key's hash). Key rotations are also pushed: the rotation activity
// sends a PostgreSQL NOTIFY that every instance's Listen applies at once,
// and the rotating instance forgets the org's keys itself before it
// answers. Pins never change once written (the first one wins), so cached
// pins need no revalidation.
package sdkcache
