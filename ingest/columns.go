package ingest

import (
	"slices"
	"strings"

	"github.com/expd/expd/vocab"
)

// EventColumns are the events columns the write path stores (every
// engine's), in the order of AppendEventValues.
var EventColumns = slices.Concat(
	[]string{"org_id", "event_id", "type", "experiment_id", "user_id", "variant", "ts", "received_at", "config_version"},
	vocab.ModelCallColumns(),
	[]string{"business_metric", "value", "source"},
)

// TsColumn is the index of ts in EventColumns; received_at follows it.
const TsColumn = 6

var columnList = strings.Join(EventColumns, ", ")

// AppendEventValues appends r's values in EventColumns order, its org and
// experiment ids as the caller encodes them (parsed for COPY, text for
// SQLite and ClickHouse). The ts and received_at values are at
// TsColumn and TsColumn+1.
func AppendEventValues(dst []any, r *EventRow, orgID, experimentID any) []any {
	dst = append(dst, orgID, r.EventID, string(r.Type), experimentID, r.UserID, r.Variant, r.Ts, r.ReceivedAt, r.ConfigVersion)
	for _, f := range vocab.ModelCallFields {
		dst = append(dst, f.Value(&r.ModelCall))
	}
	return append(dst, r.BusinessMetric, r.Value, r.Source)
}
