package database

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
)

// NewSchema creates a uniquely named schema (prefix + random hex) in the
// PostgreSQL database of baseURL and returns baseURL pointed at it through
// search_path, and a function that drops it. Tests and benchmarks use it
// so that runs never see each other's rows.
func NewSchema(baseURL, prefix string) (string, func() error, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return "", nil, fmt.Errorf("parse database URL: %w", err)
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", nil, err
	}
	schema := prefix + hex.EncodeToString(b[:])
	admin, err := Open(baseURL, "")
	if err != nil {
		return "", nil, err
	}
	sqlAdmin, err := admin.DB()
	if err != nil {
		return "", nil, err
	}
	if err := admin.Exec("CREATE SCHEMA " + schema).Error; err != nil {
		_ = sqlAdmin.Close()
		return "", nil, fmt.Errorf("create schema %s: %w", schema, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	drop := func() error {
		defer sqlAdmin.Close()
		return admin.Exec("DROP SCHEMA " + schema + " CASCADE").Error
	}
	return u.String(), drop, nil
}
