// Package temporaltest gives workflow integration tests a real Temporal
// server, in memory and in process, shared by all tests of a package.
//
// Usage:
//
//	func TestMain(m *testing.M) { temporaltest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		env := temporaltest.Start(t)
//		env.NewWorker(func(r worker.Registry) { r.RegisterWorkflow(MyWorkflow) })
//		run, err := env.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: env.TaskQueue}, MyWorkflow)
//		...
//	}
//
// The server starts on the first Start of the test binary, with expd's
// search attributes (ExpdOrgID, ExpdExperimentID) registered in its
// namespace. Main stops it after the last test; without Main it lives until
// the test binary exits. Each Env has a task queue of its own, so tests may
// run in parallel without stealing each other's tasks.
package temporaltest
