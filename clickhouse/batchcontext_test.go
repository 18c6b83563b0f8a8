package clickhouse

import (
	"context"
	"errors"
	"testing"
)

// A batch's context ends with its caller's while the batch is sent, and
// never after release: the driver's batch closes its connection when its
// context ends, and after release the connection is back in the pool.
func TestBatchContextEndsOnlyBeforeRelease(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	bctx, release := batchContext(ctx)
	release()
	cancel()
	if err := bctx.Err(); err != nil {
		t.Fatalf("the batch's context ended after release: %v", err)
	}

	stopped := errors.New("the request ended")
	ctx, cancelCause := context.WithCancelCause(t.Context())
	bctx, release = batchContext(ctx)
	defer release()
	cancelCause(stopped)
	<-bctx.Done() // AfterFunc runs in its own goroutine
	if !errors.Is(context.Cause(bctx), stopped) {
		t.Fatalf("the batch's context ended with %v; want the caller's cause", context.Cause(bctx))
	}
}
