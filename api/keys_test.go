package api_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"google.golang.org/protobuf/proto"

	"github.com/expd/expd/api"
	"github.com/expd/expd/auth"
	"github.com/expd/expd/database"
	"github.com/expd/expd/internal/temporaltest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/keys"
	"github.com/expd/expd/sdkcache"
	"github.com/expd/expd/workflows"
)

// newKeysEnv is an SDK env whose key rotations run on the in-process
// Temporal server, with a worker of its own task queue.
func newKeysEnv(t *testing.T, tune ...func(*api.Deps)) (*testenv.Env, *temporaltest.Env) {
	t.Helper()
	return testenv.NewWithWorker(t, nil, sdkDeps(t, tune)...)
}

type keyBody struct {
	Scope     string    `json:"scope"`
	Key       string    `json:"key"`
	CreatedAt time.Time `json:"created_at"`
}

func rotate(t *testing.T, env *testenv.Env, org testenv.Org, scope string) keyBody {
	t.Helper()
	var k keyBody
	env.Do(t, "POST", "/v1/keys", map[string]string{"scope": scope}, testenv.Bearer(org.AdminToken)...).ExpectJSON(t, http.StatusCreated, &k)
	return k
}

func configStatus(t *testing.T, env *testenv.Env, key string) int {
	t.Helper()
	return getConfig(t, env, key).Status
}

func TestRotationRevokesTheOldKeyAtOnce(t *testing.T) {
	env, _ := newKeysEnv(t)
	org := env.NewOrg(t)
	for _, c := range []struct {
		scope, old string
	}{{"secret", org.SecretKey}, {"publishable", org.PublishableKey}} {
		if s := configStatus(t, env, c.old); s != http.StatusOK { // now cached
			t.Fatalf("old %s key before rotation: %d", c.scope, s)
		}
		k := rotate(t, env, org, c.scope)
		if scope, ok := auth.ScopeOfKey(k.Key); !ok || string(scope) != c.scope || k.Scope != c.scope || time.Since(k.CreatedAt) > time.Minute {
			t.Fatalf("new %s key: %+v", c.scope, k)
		}
		if s := configStatus(t, env, c.old); s != http.StatusUnauthorized {
			t.Fatalf("old %s key right after rotation: %d, want 401", c.scope, s)
		}
		if s := configStatus(t, env, k.Key); s != http.StatusOK {
			t.Fatalf("new %s key: %d, want 200", c.scope, s)
		}
	}
	// The audit log has both rotations, by the admin, without key material.
	var page auditPage
	r := env.Do(t, "GET", "/v1/audit?action=key.rotated&limit=2", nil, testenv.Bearer(org.AdminToken)...)
	r.JSON(t, &page)
	if len(page.Entries) != 2 || bytes.Contains(r.Body, []byte(org.SecretKey)) || bytes.Contains(r.Body, []byte(org.PublishableKey)) {
		t.Fatalf("key audit: %s", r.Body)
	}
	for i, e := range page.Entries {
		if e.Actor != "user_admin_"+org.ClerkOrgID || e.Before["key_ids"] == nil || e.After["key_id"] == nil {
			t.Fatalf("rotation entry %d: %+v", i, e)
		}
	}
}

// A second API instance that had the old key cached refuses it right
// after the rotation too: the rotation's NOTIFY reaches its listener.
func TestRotationRevokesTheOldKeyOnEveryInstance(t *testing.T) {
	env, _ := newKeysEnv(t)
	if !database.IsPostgres(env.DB) {
		t.Skip("instances share rotations through PostgreSQL NOTIFY; SQLite (expd dev) runs one instance")
	}
	// The other instance caches keys for an hour: only the rotation's
	// notification can make it forget the old one.
	other := secondInstanceWith(t, env, sdkcache.Options{MaxAge: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go other.Deps.SDK.Listen(ctx)
	select {
	case <-other.Deps.SDK.Listening():
	case <-time.After(time.Minute):
		t.Fatal("the other instance never started listening for rotations")
	}
	org := env.NewOrg(t)
	if s := configStatus(t, other, org.SecretKey); s != http.StatusOK {
		t.Fatalf("old key on the other instance: %d", s)
	}
	k := rotate(t, env, org, "secret")
	// The notification is delivered at commit and applied asynchronously:
	// the old key must stop working on the other instance within moments,
	// long before its hour in the cache.
	deadline := time.Now().Add(30 * time.Second)
	for configStatus(t, other, org.SecretKey) != http.StatusUnauthorized {
		if time.Now().After(deadline) {
			t.Fatal("old key still accepted by the other instance 30 s after rotation")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if s := configStatus(t, other, k.Key); s != http.StatusOK {
		t.Fatalf("new key on the other instance: %d", s)
	}
}

func TestConcurrentRotationsLeaveOneValidKey(t *testing.T) {
	env, _ := newKeysEnv(t)
	org := env.NewOrg(t)
	const n = 4
	issued := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := env.Do(t, "POST", "/v1/keys", map[string]string{"scope": "secret"}, testenv.Bearer(org.AdminToken)...)
			var k keyBody
			if r.Status == http.StatusCreated {
				r.JSON(t, &k)
			}
			issued[i] = k.Key
		}()
	}
	wg.Wait()
	valid := 0
	for i, k := range issued {
		if k == "" {
			t.Fatalf("rotation %d did not answer 201", i)
		}
		if configStatus(t, env, k) == http.StatusOK {
			valid++
		}
	}
	var live int64
	env.DB.Model(&keys.APIKey{}).Where("org_id = ? AND scope = ? AND revoked_at IS NULL", org.ID, "secret").Count(&live)
	if valid != 1 || live != 1 || configStatus(t, env, org.SecretKey) != http.StatusUnauthorized {
		t.Fatalf("%d of %d issued keys work, %d live rows; want exactly one", valid, n, live)
	}
}

// The plaintext of a new key appears neither in the workflow's history
// (which does carry its hash) nor in any log line.
func TestKeyPlaintextStaysOutOfHistoryAndLogs(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	prevDefault := slog.Default()
	slog.SetDefault(logger)
	t.Cleanup(func() { slog.SetDefault(prevDefault) })
	env, tenv := newKeysEnv(t, func(d *api.Deps) { d.Logger = logger })
	org := env.NewOrg(t)

	for _, scope := range []string{"secret", "publishable"} {
		k := rotate(t, env, org, scope)
		history := workflowHistory(t, tenv, workflows.KeyRotationID(org.ID, scope))
		if !bytes.Contains(history, []byte(auth.HashKey(k.Key))) {
			t.Fatalf("%s: the history does not carry the key's hash; the check below would prove nothing", scope)
		}
		if bytes.Contains(history, []byte(k.Key)) {
			t.Fatalf("%s key plaintext found in workflow history", scope)
		}
		if bytes.Contains(logs.Bytes(), []byte(k.Key)) {
			t.Fatalf("%s key plaintext found in logs", scope)
		}
	}
	if !bytes.Contains(logs.Bytes(), []byte("/v1/keys")) {
		t.Fatal("no request was logged; the log check proves nothing")
	}
}

func workflowHistory(t *testing.T, tenv *temporaltest.Env, id string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	it := tenv.Client.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var all []byte
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := proto.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, raw...)
	}
	return all
}

func TestPublishableKeyCanBeReadAgainSecretNever(t *testing.T) {
	env, _ := newKeysEnv(t)
	org := env.NewOrg(t)
	pk := rotate(t, env, org, "publishable")
	r := env.Do(t, "GET", "/v1/keys/publishable", nil, testenv.Bearer(org.AdminToken)...)
	var got keyBody
	if r.Status != http.StatusOK {
		t.Fatalf("GET publishable: %d %s", r.Status, r.Body)
	}
	r.JSON(t, &got)
	if got.Key != pk.Key || got.Scope != "publishable" {
		t.Fatalf("read back %+v, want %s", got, pk.Key)
	}
	sk := rotate(t, env, org, "secret")
	for _, path := range []string{"/v1/keys/secret", "/v1/keys"} {
		r := env.Do(t, "GET", path, nil, testenv.Bearer(org.AdminToken)...)
		if r.Status < 400 || bytes.Contains(r.Body, []byte(sk.Key)) {
			t.Fatalf("GET %s: %d %s; a secret key must never be readable", path, r.Status, r.Body)
		}
	}
}

func TestKeyRoutesNeedAnAdmin(t *testing.T) {
	env, _ := newKeysEnv(t)
	org := env.NewOrg(t)
	r := env.Do(t, "POST", "/v1/keys", map[string]string{"scope": "secret"}, testenv.Bearer(org.MemberToken)...)
	if p := testenv.ExpectProblem(t, r, http.StatusForbidden); p.Code != "admin_required" {
		t.Fatalf("member rotation: %+v", p)
	}
	r = env.Do(t, "GET", "/v1/keys/publishable", nil, testenv.Bearer(org.MemberToken)...)
	testenv.ExpectProblem(t, r, http.StatusForbidden)
	r = env.Do(t, "POST", "/v1/keys", map[string]string{"scope": "secret"}, testenv.APIKey(org.SecretKey)...)
	testenv.ExpectProblem(t, r, http.StatusUnauthorized)
	if s := configStatus(t, env, org.SecretKey); s != http.StatusOK {
		t.Fatalf("refused rotations must leave the key valid: %d", s)
	}
	r = env.Do(t, "POST", "/v1/keys", map[string]string{"scope": "root"}, testenv.Bearer(org.AdminToken)...)
	if p := testenv.ExpectProblem(t, r, http.StatusBadRequest); !p.HasFieldError("scope") {
		t.Fatalf("bad scope: %+v", p)
	}
}

func TestRotationWithoutTemporalIsUnavailable(t *testing.T) {
	env := newSDKEnv(t)
	org := env.NewOrg(t)
	r := env.Do(t, "POST", "/v1/keys", map[string]string{"scope": "secret"}, testenv.Bearer(org.AdminToken)...)
	testenv.ExpectProblem(t, r, http.StatusServiceUnavailable)
	if s := configStatus(t, env, org.SecretKey); s != http.StatusOK {
		t.Fatalf("key after a refused rotation: %d", s)
	}
}
