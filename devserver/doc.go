// Package devserver runs the Temporal parts of `expd dev` inside the calling
// process: a Temporal server persisted in a SQLite file and the Temporal UI
// pointed at it.
//
// Files and ports:
//   - The Temporal state lives in <DataDir>/temporal.db. Its schema is set up
//     on first start and reused afterwards, so workflows and their histories
//     survive a restart.
//   - The frontend gRPC port (Options.FrontendPort), its HTTP API port
//     (Options.HTTPPort) and the UI port (Options.UIPort) listen on
//     Options.Host; 0 picks a free port, a taken port is an error at Start.
//   - The history, matching and worker services listen on free ports of
//     127.0.0.1 chosen at every start. Membership is static (every service
//     runs in this process), so no membership port is opened at all.
//   - No metrics or pprof listener is opened.
package devserver
