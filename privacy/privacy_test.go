package privacy_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/privacy"
	"github.com/expd/expd/secrets"
	"github.com/expd/expd/vocab"
)

func TestStricter(t *testing.T) {
	for _, tc := range []struct{ a, b, want privacy.Policy }{
		{privacy.PolicyStore, "", privacy.PolicyStore},
		{privacy.PolicyStore, privacy.PolicyRedact, privacy.PolicyRedact},
		{privacy.PolicyHash, privacy.PolicyRedact, privacy.PolicyHash},
		{privacy.PolicyRedact, privacy.PolicyDrop, privacy.PolicyDrop},
		{privacy.PolicyDrop, privacy.PolicyStore, privacy.PolicyDrop},
	} {
		if got := tc.a.Stricter(tc.b); got != tc.want {
			t.Errorf("%s.Stricter(%s) = %s, want %s", tc.a, tc.b, got, tc.want)
		}
	}
	if err := privacy.CheckExperiment(privacy.PolicyRedact, privacy.PolicyHash); err == nil || !strings.Contains(err.Error(), "looser") {
		t.Errorf("redact under hash: %v", err)
	}
	if err := privacy.CheckExperiment(privacy.PolicyHash, privacy.PolicyHash); err != nil {
		t.Errorf("the org's own policy: %v", err)
	}
}

func ring(t *testing.T) *secrets.Keyring {
	t.Helper()
	k, err := secrets.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	r, err := secrets.Parse(k, "")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func text(s string) *string { return &s }

// Each policy's stored form, the experiment's stricter choice winning,
// and the event's own strings left untouched (only pointers replaced).
func TestPayloadApply(t *testing.T) {
	db := testenv.DB(t)
	org := testenv.NewOrg(t, db, testenv.Signer(t))
	ctx := context.Background()
	keys := ring(t)
	st := privacy.Store{DB: db, Secrets: keys}
	if _, err := st.Put(ctx, org.ID, "admin", privacy.Settings{PayloadPolicy: privacy.PolicyRedact}, 30, nil); err != nil {
		t.Fatal(err)
	}
	p, err := privacy.Load(ctx, db, keys, org.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	sent := "mail ann@example.com"
	apply := func(exp privacy.Policy) vocab.ModelCall {
		mc := vocab.ModelCall{Prompt: &sent, Response: text("ok"), Error: text("bad key sk-abcdefghijklmnopqrstuvwxyz")}
		p.Apply(exp, &mc)
		return mc
	}
	if mc := apply(""); *mc.Prompt != "mail [EMAIL]" || *mc.Response != "ok" || *mc.Error != "bad key [SECRET]" {
		t.Errorf("redact: %q %q %q", *mc.Prompt, *mc.Response, *mc.Error)
	}
	if sent != "mail ann@example.com" {
		t.Fatalf("the sent text was changed in place: %q", sent)
	}
	if mc := apply(privacy.PolicyStore); *mc.Prompt != "mail [EMAIL]" {
		t.Errorf("a looser experiment policy loosened the org's: %q", *mc.Prompt)
	}
	h1, h2 := apply(privacy.PolicyHash), apply(privacy.PolicyHash)
	if !strings.HasPrefix(*h1.Prompt, privacy.HashPrefix) || *h1.Prompt != *h2.Prompt || *h1.Prompt == *h1.Response {
		t.Errorf("hash: %q %q %q", *h1.Prompt, *h2.Prompt, *h1.Response)
	}
	if mc := apply(privacy.PolicyDrop); mc.Prompt != nil || mc.Response != nil || *mc.Error != "bad key [SECRET]" {
		t.Errorf("drop: %v %v %v", mc.Prompt, mc.Response, mc.Error)
	}
	if c := p.Comment(text("ann@example.com said")); *c != "[EMAIL] said" {
		t.Errorf("comment under redact: %q", *c)
	}

	// Another org's key differs: its hashes of the same text do not match.
	other := testenv.NewOrg(t, db, testenv.Signer(t))
	q, err := privacy.Load(ctx, db, keys, other.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	mc := vocab.ModelCall{Prompt: &sent}
	q.Apply(privacy.PolicyHash, &mc)
	if *mc.Prompt == *h1.Prompt {
		t.Error("two orgs hash alike: the key is not per org")
	}
}

// Concurrent first loads make one hash key: every instance hashes alike.
func TestHashKeyMadeOnce(t *testing.T) {
	db := testenv.DB(t)
	org := testenv.NewOrg(t, db, testenv.Signer(t))
	keys := ring(t)
	var wg sync.WaitGroup
	out := make([]string, 4)
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := privacy.Load(context.Background(), db, keys, org.ID, true)
			if err != nil {
				t.Error(err)
				return
			}
			mc := vocab.ModelCall{Prompt: text("same")}
			p.Apply(privacy.PolicyHash, &mc)
			out[i] = *mc.Prompt
		}()
	}
	wg.Wait()
	for _, h := range out[1:] {
		if h != out[0] {
			t.Fatalf("loads hashed differently: %v", out)
		}
	}
	// Without the server key the hash policy stores nothing, never text.
	p, err := privacy.Load(context.Background(), db, nil, org.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	mc := vocab.ModelCall{Prompt: text("secret text")}
	p.Apply(privacy.PolicyHash, &mc)
	if mc.Prompt != nil {
		t.Errorf("no key: stored %q", *mc.Prompt)
	}
}

// The retention in force is the shorter of the plan's and the org's own;
// an org that never set one keeps the plan's, and another org's setting
// changes nothing.
func TestRetentionDaysInForce(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	signer := testenv.Signer(t)
	org, other := testenv.NewOrg(t, db, signer), testenv.NewOrg(t, db, signer)
	if days, err := privacy.RetentionDays(ctx, db, org.ID, 30); err != nil || days != 30 {
		t.Fatalf("no settings: %d, %v; want the plan's 30", days, err)
	}
	set := privacy.Defaults()
	seven := 7
	set.RetentionDays = &seven
	if _, err := (privacy.Store{DB: db}).Put(ctx, org.ID, "test", set, 30, nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		org        string
		plan, want int
	}{{org.ID, 30, 7}, {org.ID, 5, 5}, {other.ID, 30, 30}} {
		if days, err := privacy.RetentionDays(ctx, db, tc.org, tc.plan); err != nil || days != tc.want {
			t.Errorf("plan %d: %d, %v; want %d", tc.plan, days, err, tc.want)
		}
	}
}
