package billing_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stripe/stripe-go/v76"

	"github.com/expd/expd/billing"
)

func TestPermanentErrors(t *testing.T) {
	cases := map[string]struct {
		err  error
		want bool
	}{
		"missing resource": {fmt.Errorf("read: %w", &stripe.Error{HTTPStatusCode: 404}), true},
		"bad request":      {&stripe.Error{HTTPStatusCode: 400}, true},
		"rate limited":     {&stripe.Error{HTTPStatusCode: 429}, false},
		"lock conflict":    {&stripe.Error{HTTPStatusCode: 409}, false},
		"server error":     {&stripe.Error{HTTPStatusCode: 503}, false},
		"network":          {errors.New("connection refused"), false},
		"not configured":   {billing.ErrNotConfigured, true},
	}
	for name, tc := range cases {
		if got := billing.Permanent(tc.err); got != tc.want {
			t.Errorf("%s: Permanent = %v, want %v", name, got, tc.want)
		}
	}
}

func TestPricesConfigured(t *testing.T) {
	if !billing.New(billing.Config{PricePro: "p", PriceBusiness: "b"}).PricesConfigured() {
		t.Error("both prices set but not configured")
	}
	var none *billing.Client
	if billing.New(billing.Config{PricePro: "p"}).PricesConfigured() || none.PricesConfigured() {
		t.Error("prices configured without both prices")
	}
}
