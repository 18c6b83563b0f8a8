package sdkcache

import (
	"sync"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/secrets"
)

// Defaults of Options.
const (
	DefaultMaxAge  = time.Second
	DefaultMaxPins = 1_000_000
	// DefaultPinMaxAge: an hour of cached pins saves nearly every read of
	// a returning user's pin, and is far inside the 24 hours an erasure
	// promises.
	DefaultPinMaxAge = time.Hour
)

// Options tune a Cache; zero values take the defaults.
type Options struct {
	// MaxAge bounds how long a cached snapshot or key is served without
	// revalidation (env EXPD_SDK_CACHE_MAX_AGE in cmd/expd).
	MaxAge time.Duration
	// MaxPins bounds the number of cached pins (about 100 bytes each).
	MaxPins int
	// PinMaxAge bounds how long a cached pin is served without reading
	// its row again (DefaultPinMaxAge): how long an erased user's variant
	// can outlive the erasure on an instance.
	PinMaxAge time.Duration
	// Now is the clock; tests move it.
	Now func() time.Time
	// Secrets (EXPD_SECRETS_KEY) opens the orgs' keys of the hash payload
	// policy; nil: texts under that policy are stored as nothing.
	Secrets *secrets.Keyring
}

// Cache is one API instance's cache for the SDK routes.
type Cache struct {
	db      *gorm.DB
	Configs *Configs
	Keys    *Keys
	Pins    *Pins

	listening     chan struct{}
	listeningOnce sync.Once
}

// New returns an empty cache over db. Call Listen to receive key rotations
// of other instances (PostgreSQL).
func New(db *gorm.DB, opts Options) *Cache {
	if opts.MaxAge <= 0 {
		opts.MaxAge = DefaultMaxAge
	}
	if opts.MaxPins <= 0 {
		opts.MaxPins = DefaultMaxPins
	}
	if opts.PinMaxAge <= 0 {
		opts.PinMaxAge = DefaultPinMaxAge
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Cache{
		db:      db,
		Configs: &Configs{db: db, secrets: opts.Secrets, store: experiments.Store{DB: db}, maxAge: opts.MaxAge, now: opts.Now},
		Keys:    &Keys{maxAge: opts.MaxAge, now: opts.Now, byHash: map[string]liveKey{}},
		Pins:    &Pins{max: opts.MaxPins, maxAge: opts.PinMaxAge, now: opts.Now, pins: map[pinKey]pinEntry{}},

		listening: make(chan struct{}),
	}
}
