// Package workflowclient is the client side of expd's Temporal workflows:
// every start, signal and query with its options (Starter), the
// reconciliation of lifecycle workflows at worker start, the schedules,
// and the registration of the custom search attributes. It is the code
// that talks to a Temporal frontend (and, for the outbox and signal
// debts, to the database); the workflows it starts live in workflows/,
// which stays deterministic, and every id it uses is built there.
package workflowclient
