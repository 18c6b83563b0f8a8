package validate

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestErrorsCollectEveryField(t *testing.T) {
	var e Errors
	if e.Err() != nil {
		t.Fatal("empty Errors is an error")
	}
	e.Add("name", "is required")
	e.Add("allocation[1].weight", "must be >= %d", 0)
	err := fmt.Errorf("create: %w", e.Err())
	f := Fields(err)
	if len(f) != 2 || f[1].Field != "allocation[1].weight" || f[1].Reason != "must be >= 0" {
		t.Fatalf("fields: %+v", f)
	}
	if !strings.Contains(err.Error(), "name: is required") {
		t.Fatalf("message: %v", err)
	}
	if Fields(errors.New("other")) != nil {
		t.Fatal("plain error has fields")
	}
}

func TestDecodeErrorNamesTheField(t *testing.T) {
	var v struct {
		BucketCount uint32 `json:"bucket_count"`
		Metrics     []struct {
			Shared *bool `json:"shared_org_wide"`
		} `json:"metrics"`
	}
	err := DecodeError(json.Unmarshal([]byte(`{"bucket_count": "ten"}`), &v))
	f := Fields(err)
	if len(f) != 1 || f[0].Field != "bucket_count" || !strings.Contains(f[0].Reason, "number") {
		t.Fatalf("type error: %+v (%v)", f, err)
	}
	err = DecodeError(json.Unmarshal([]byte(`{"metrics": [{"shared_org_wide": "no"}]}`), &v))
	if f := Fields(err); len(f) != 1 || f[0].Field != "metrics.shared_org_wide" {
		t.Fatalf("nested type error: %+v", f)
	}
	err = DecodeError(json.Unmarshal([]byte(`{"bucket_count": `), &v))
	if Fields(err) != nil || !strings.Contains(err.Error(), "malformed JSON") {
		t.Fatalf("syntax error: %v", err)
	}
	tooBig := &http.MaxBytesError{Limit: 10}
	if err := DecodeError(tooBig); !errors.As(err, &tooBig) {
		t.Fatal("MaxBytesError lost")
	}
}
