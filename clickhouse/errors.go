package clickhouse

import (
	"errors"
	"slices"

	ch "github.com/ClickHouse/clickhouse-go/v2"

	"github.com/expd/expd/database"
	"github.com/expd/expd/ingest"
)

// unavailableCodes are ClickHouse error codes of a node or shard that
// cannot be reached now: a retry may succeed (SOCKET_TIMEOUT,
// NETWORK_ERROR, TIMEOUT_EXCEEDED, ALL_CONNECTION_TRIES_FAILED,
// ALL_REPLICAS_ARE_STALE, NO_AVAILABLE_REPLICA, TOO_MANY_SIMULTANEOUS_QUERIES).
var unavailableCodes = []int32{209, 210, 159, 279, 285, 3, 202}

// unavailable wraps err in ingest.UnavailableError when a retry may cure
// it (a shard down answers 503 with Retry-After, docs/ingest.md).
func unavailable(err error) error {
	if err == nil {
		return nil
	}
	var ex *ch.Exception
	if database.IsUnavailable(err) || errors.As(err, &ex) && slices.Contains(unavailableCodes, ex.Code) {
		return &ingest.UnavailableError{Err: err}
	}
	return err
}
