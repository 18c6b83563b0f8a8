package ingest

import (
	"slices"
	"strings"

	"github.com/expd/expd/vocab"
)

// eventColumns are the events columns the write path stores, in the order
// of appendEventValues.
var eventColumns = slices.Concat(
	[]string{"org_id", "event_id", "type", "experiment_id", "user_id", "variant", "ts", "received_at", "config_version"},
	vocab.ModelCallColumns(),
	[]string{"business_metric", "value", "source"},
)

var columnList = strings.Join(eventColumns, ", ")

// appendEventValues appends r's values in eventColumns order, its org and
// experiment ids as the caller encodes them (parsed for COPY, text for
// SQLite).
func appendEventValues(dst []any, r *EventRow, orgID, experimentID any) []any {
	dst = append(dst, orgID, r.EventID, string(r.Type), experimentID, r.UserID, r.Variant, r.Ts, r.ReceivedAt, r.ConfigVersion)
	for _, f := range vocab.ModelCallFields {
		dst = append(dst, f.Value(&r.ModelCall))
	}
	return append(dst, r.BusinessMetric, r.Value, r.Source)
}
