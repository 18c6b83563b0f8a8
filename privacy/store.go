package privacy

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"gorm.io/datatypes"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/expd/expd/audit"
	"github.com/expd/expd/redaction"
	"github.com/expd/expd/secrets"
)

// row is the table org_privacy (migration 0340). No row: Defaults.
// hash_key is the org's key of the hash policy, 32 random bytes sealed
// with EXPD_SECRETS_KEY (package secrets) and bound to the org, ” until
// the org first needs it; it survives a rotation of the server key (the
// previous key still opens it), so identical texts keep grouping.
type row struct {
	OrgID          string `gorm:"primaryKey"`
	PayloadPolicy  string
	CustomPatterns datatypes.JSON
	RetentionDays  *int
	HashKey        string
	UpdatedAt      *time.Time
	UpdatedBy      string
}

func (row) TableName() string { return "org_privacy" }

// HashKeys is the column of sealed hash keys `expd migrate` seals again
// under the new server key during a rotation (secrets.Keyring.ResealColumn).
var HashKeys = secrets.Column{Table: "org_privacy", Key: "org_id", Secret: "hash_key", Owner: sealOwner}

// sealOwner binds an org's sealed hash key to the org: copied to another
// org's row, it does not open.
func sealOwner(orgID string) string { return "org_privacy:" + orgID }

// Store reads and writes org_privacy.
type Store struct {
	DB      *gorm.DB
	Secrets *secrets.Keyring // seals the hash key; nil or unconfigured: the hash policy is refused
}

// RetentionDays is the retention in force for the org, in days: the
// shorter of its plan's (planDays) and its own retention_days. The
// nightly purge and the results window both read it.
func RetentionDays(ctx context.Context, db *gorm.DB, orgID string, planDays int) (int, error) {
	set, err := Store{DB: db}.Get(ctx, orgID)
	if err != nil {
		return 0, fmt.Errorf("privacy settings of org %s: %w", orgID, err)
	}
	return int(set.Retention(planDays) / (24 * time.Hour)), nil
}

// Get returns the org's settings (Defaults when it never set them).
func (s Store) Get(ctx context.Context, orgID string) (Settings, error) {
	r, ok, err := read(s.DB.WithContext(ctx), orgID)
	if err != nil || !ok {
		return Defaults(), err
	}
	return r.settings()
}

func read(db *gorm.DB, orgID string) (row, bool, error) {
	var rows []row
	if err := db.Where("org_id = ?", orgID).Limit(1).Find(&rows).Error; err != nil {
		return row{}, false, fmt.Errorf("read privacy settings of org %s: %w", orgID, err)
	}
	if len(rows) == 0 {
		return row{}, false, nil
	}
	return rows[0], true, nil
}

func (r row) settings() (Settings, error) {
	out := Settings{PayloadPolicy: Policy(r.PayloadPolicy), RetentionDays: r.RetentionDays, UpdatedAt: r.UpdatedAt, UpdatedBy: r.UpdatedBy}
	if err := json.Unmarshal(r.CustomPatterns, &out.CustomPatterns); err != nil {
		return Settings{}, fmt.Errorf("decode custom patterns of org %s: %w", r.OrgID, err)
	}
	if out.CustomPatterns == nil {
		out.CustomPatterns = []redaction.Pattern{}
	}
	return out, nil
}

// Put checks in (Settings.Check against the plan's retention; the hash
// policy needs a configured secrets key: ErrHashUnavailable) and stores
// it, with its audit entry and then also (the caller's part of the same
// transaction: raising the org's config_version so every instance's
// cached policy is rebuilt) in one transaction.
func (s Store) Put(ctx context.Context, orgID, actor string, in Settings, planRetentionDays int, also func(tx *gorm.DB) error) (Settings, error) {
	if err := in.Check(planRetentionDays); err != nil {
		return Settings{}, err
	}
	if in.PayloadPolicy == PolicyHash && !s.Secrets.Configured() {
		return Settings{}, ErrHashUnavailable
	}
	patterns, err := json.Marshal(in.CustomPatterns)
	if err != nil {
		return Settings{}, fmt.Errorf("encode custom patterns: %w", err)
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	var out Settings
	err = s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		old, had, err := read(tx.Clauses(clause.Locking{Strength: "UPDATE"}), orgID)
		if err != nil {
			return err
		}
		before := Defaults()
		if had {
			if before, err = old.settings(); err != nil {
				return err
			}
		}
		r := row{OrgID: orgID, PayloadPolicy: string(in.PayloadPolicy), CustomPatterns: patterns,
			RetentionDays: in.RetentionDays, HashKey: old.HashKey, UpdatedAt: &now, UpdatedBy: actor}
		if r.HashKey == "" && in.PayloadPolicy == PolicyHash {
			if r.HashKey, err = newHashKey(s.Secrets, orgID); err != nil {
				return err
			}
		}
		if err := tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&r).Error; err != nil {
			return fmt.Errorf("store privacy settings of org %s: %w", orgID, err)
		}
		if out, err = r.settings(); err != nil {
			return err
		}
		if err := audit.Record(ctx, tx, audit.Entry{OrgID: orgID, Action: audit.PrivacyUpdated, Actor: actor,
			Summary: out.summary(), Before: before, After: out, At: now}); err != nil {
			return err
		}
		if also != nil {
			return also(tx)
		}
		return nil
	})
	return out, err
}

func newHashKey(ring *secrets.Keyring, orgID string) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate hash key: %w", err)
	}
	sealed, err := ring.Seal(base64.StdEncoding.EncodeToString(b), sealOwner(orgID))
	if err != nil {
		return "", fmt.Errorf("seal hash key of org %s: %w", orgID, err)
	}
	return sealed, nil
}

// Load builds the org's Payload for the ingest path (sdkcache keeps it in
// the org's snapshot, rebuilt when config_version changes). needHash says
// an experiment of the org asks for the hash policy, so the org's hash key
// is made if it has none yet; without a configured secrets key hashed
// texts are stored as nothing.
func Load(ctx context.Context, db *gorm.DB, ring *secrets.Keyring, orgID string, needHash bool) (*Payload, error) {
	db = db.WithContext(ctx)
	r, ok, err := read(db, orgID)
	if err != nil {
		return nil, err
	}
	set := Defaults()
	if ok {
		if set, err = r.settings(); err != nil {
			return nil, err
		}
	}
	red, err := redaction.Compile(set.CustomPatterns)
	if err != nil {
		return nil, fmt.Errorf("compile custom patterns of org %s: %w", orgID, err)
	}
	p := &Payload{Policy: set.PayloadPolicy, redactor: red}
	if (needHash || p.Policy == PolicyHash) && ring.Configured() {
		if p.hashKey, err = hashKey(db, ring, orgID, r.HashKey); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// hashKey opens the org's hash key, making it first if it has none: the
// first of concurrent makers wins (the row is inserted or its empty key
// filled only where still empty), the others read the winner's.
func hashKey(db *gorm.DB, ring *secrets.Keyring, orgID, sealed string) ([]byte, error) {
	if sealed == "" {
		fresh, err := newHashKey(ring, orgID)
		if err != nil {
			return nil, err
		}
		def := Defaults()
		patterns, _ := json.Marshal(def.CustomPatterns)
		err = db.Clauses(clause.OnConflict{DoNothing: true}).Create(&row{OrgID: orgID, PayloadPolicy: string(def.PayloadPolicy), CustomPatterns: patterns}).Error
		if err != nil {
			return nil, fmt.Errorf("create privacy row of org %s: %w", orgID, err)
		}
		if err := db.Model(&row{}).Where("org_id = ? AND hash_key = ''", orgID).Update("hash_key", fresh).Error; err != nil {
			return nil, fmt.Errorf("store hash key of org %s: %w", orgID, err)
		}
		r, _, err := read(db, orgID)
		if err != nil {
			return nil, err
		}
		sealed = r.HashKey
	}
	plain, err := ring.Open(sealed, sealOwner(orgID))
	if err != nil {
		// Sealed under a key this server no longer holds: hashed texts are
		// stored as nothing (Payload.text) rather than ingest failing.
		slog.Warn("privacy: cannot open the org's hash key; texts under the hash policy are dropped", "org_id", orgID, "error", err)
		return nil, nil
	}
	key, err := base64.StdEncoding.DecodeString(plain)
	if err != nil || len(key) != 32 {
		return nil, errors.Join(fmt.Errorf("hash key of org %s is malformed", orgID), err)
	}
	return key, nil
}

// InForce says what the texts of an experiment asking for experiment are
// stored under now: the read routes' payload_policy and, for the events
// received before it, since (when the org's settings last changed; nil:
// never, so the default applied all along).
type InForce struct {
	PayloadPolicy      Policy     `json:"payload_policy"`
	PayloadPolicySince *time.Time `json:"payload_policy_since,omitempty"`
}

// InForce is the org's policy made stricter by experiment.
func (s Store) InForce(ctx context.Context, orgID string, experiment Policy) (InForce, error) {
	set, err := s.Get(ctx, orgID)
	if err != nil {
		return InForce{}, err
	}
	return InForce{PayloadPolicy: set.PayloadPolicy.Stricter(experiment), PayloadPolicySince: set.UpdatedAt}, nil
}
