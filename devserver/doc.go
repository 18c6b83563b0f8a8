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
//   - Picked ports come from 20000-31999, below Linux's ephemeral range, and
//     Start holds each one with a listener of its own until the server that
//     uses it binds it. The UI server is handed the held listener. Temporal
//     binds its ports itself, so they are released just before its build;
//     another process taking one in that instant makes Temporal log a Fatal
//     line, which Start turns into an error before any Temporal service
//     runs, and, when the frontend ports are 0 too, Start builds the server
//     again on fresh ports (up to 5 times). With a fixed frontend port the
//     lost bind is returned as an error (the failed build keeps its ports).
//   - No metrics or pprof listener is opened.
package devserver
