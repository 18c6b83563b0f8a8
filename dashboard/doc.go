// Package dashboard is expd's web dashboard, served by the same binary at
// the root of the API's address. Pages are rendered on the server from
// html/template (one file per page), charts are SVG drawn on the server,
// and one small script of our own (assets/dashboard.js) adds what needs
// interaction: live run status, copy buttons. Every asset is embedded.
//
// The pages call the same domain functions as the API handlers
// (experiments.Store, results and its Aggregator, billing.Client) and the
// same use cases (usecases.Service, handed over in Deps: saving an
// experiment, runs, key rotation); nothing here calls the API over HTTP. Decisions: docs/dashboard.md.
package dashboard
