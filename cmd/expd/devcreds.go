package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/auth"
	"github.com/expd/expd/keys"
	"github.com/expd/expd/orgs"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/secrets"
	"github.com/expd/expd/usecases"
)

const (
	credentialsFile = "dev-credentials.json"
	signingKeyFile  = "dev-jwt-key.pem"
	secretsKeyFile  = "dev-secrets-key"
	devClerkOrgID   = "org_dev"
	devClerkUserID  = "user_dev_admin"
	devTokenTTL     = 30 * 24 * time.Hour
	// A token closer than this to expiry is re-minted at start.
	devTokenRenewBefore = 24 * time.Hour
)

// DevCredentials is <data-dir>/dev-credentials.json.
type DevCredentials struct {
	BaseURL        string `json:"base_url"`
	OrgID          string `json:"org_id"`
	IdentityJWT    string `json:"identity_jwt"`
	PublishableKey string `json:"publishable_key"`
	SecretKey      string `json:"secret_key"`
	TokenExpiresAt string `json:"identity_jwt_expires_at"`
	Plan           string `json:"plan"` // the dev org's plan at this start
}

// devCredentials creates the dev org, its admin, keys and a 30-day admin
// token on first start (and sets the org's plan when one is given), and
// reuses them on later starts: the same keys stay
// valid unless they were rotated, in which case fresh ones are issued.
func devCredentials(ctx context.Context, db *gorm.DB, dir, baseURL string, plan plans.Name) (DevCredentials, *auth.Signer, error) {
	signer, err := devSigner(filepath.Join(dir, signingKeyFile))
	if err != nil {
		return DevCredentials{}, nil, err
	}
	org, err := orgs.Ensure(ctx, db, devClerkOrgID, "dev")
	if err != nil {
		return DevCredentials{}, nil, fmt.Errorf("dev org: %w", err)
	}
	// The dev org follows the rule of every org: free until it checks out.
	// --plan (EXPD_DEV_PLAN) is the explicit way to lift its limits for
	// local load; without it the stored plan is kept.
	if plan != "" {
		if err := orgs.SetPlan(ctx, db, org.ID, plan); err != nil {
			return DevCredentials{}, nil, fmt.Errorf("dev org plan: %w", err)
		}
		org.Plan = orgs.Plan(plan)
	}
	path := filepath.Join(dir, credentialsFile)
	var creds DevCredentials
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &creds)
	}
	if creds.OrgID != org.ID {
		creds = DevCredentials{OrgID: org.ID}
	}
	creds.BaseURL = baseURL
	creds.Plan = string(org.Plan)
	for _, k := range []struct {
		scope auth.Scope
		plain *string
	}{{auth.Publishable, &creds.PublishableKey}, {auth.Secret, &creds.SecretKey}} {
		live, err := keys.IsLive(ctx, db, org.ID, *k.plain)
		if err != nil {
			return creds, nil, err
		}
		if live {
			continue
		}
		if *k.plain, err = keys.Issue(ctx, db, org.ID, k.scope, "expd dev"); err != nil {
			return creds, nil, fmt.Errorf("dev credentials: %w", err)
		}
	}
	if exp, err := time.Parse(time.RFC3339, creds.TokenExpiresAt); err != nil || time.Until(exp) < devTokenRenewBefore ||
		!tokenValid(signer, creds.IdentityJWT) {
		tok, err := signer.Sign(auth.Session{UserID: devClerkUserID, OrgID: devClerkOrgID, OrgSlug: "dev", Role: auth.AdminRole}, devTokenTTL)
		if err != nil {
			return creds, nil, err
		}
		creds.IdentityJWT = tok
		creds.TokenExpiresAt = time.Now().Add(devTokenTTL).UTC().Format(time.RFC3339)
	}
	if err := writeDevCredentials(path, creds); err != nil {
		return creds, nil, err
	}
	return creds, signer, nil
}

// recordRotatedDevKey writes a key the dev org rotated to into the
// credentials file (another org's rotation is none of its business).
func recordRotatedDevKey(path, devOrgID, orgID string, key usecases.RotatedKey) error {
	if orgID != devOrgID {
		return nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var creds DevCredentials
	if err := json.Unmarshal(raw, &creds); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	switch key.Scope {
	case auth.Publishable:
		creds.PublishableKey = key.Plain
	case auth.Secret:
		creds.SecretKey = key.Plain
	default:
		return nil
	}
	return writeDevCredentials(path, creds)
}

// writeDevCredentials replaces the file whole (a temporary file renamed
// over it), so a reader never sees half of it.
func writeDevCredentials(path string, creds DevCredentials) error {
	b, _ := json.MarshalIndent(creds, "", "  ")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	return os.Rename(tmp, path)
}

func tokenValid(s *auth.Signer, tok string) bool {
	_, err := s.Verifier().Verify(tok)
	return err == nil
}

// devSigner loads the dev signing key, creating it on first start.
func devSigner(path string) (*auth.Signer, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		return auth.SignerFromPEM(b)
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read dev signing key: %w", err)
	}
	s, err := auth.NewSigner()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, s.PrivatePEM(), 0o600); err != nil {
		return nil, fmt.Errorf("write dev signing key: %w", err)
	}
	return s, nil
}

// devSecretsKey reads the dev server's EXPD_SECRETS_KEY from path,
// generating it (0600) on first start, so judges' keys sealed by one dev
// run open in the next.
func devSecretsKey(path string) (*secrets.Keyring, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		key, err := secrets.NewKey()
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
			return nil, fmt.Errorf("write dev secrets key: %w", err)
		}
		b = []byte(key)
	} else if err != nil {
		return nil, fmt.Errorf("read dev secrets key: %w", err)
	}
	ring, err := secrets.Parse(string(b), "")
	if err != nil {
		return nil, fmt.Errorf("dev secrets key %s: %w", path, err)
	}
	return ring, nil
}
