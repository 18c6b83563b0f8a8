package main

import (
	"os"
	"strings"
)

// Config is the environment of DESIGN.md §3.
type Config struct {
	DatabaseURL       string
	TemporalAddress   string
	TemporalNamespace string
	TaskQueue         string
	ClerkJWTKey       string
	ClerkJWKSURL      string
	LogLevel          string
}

func configFromEnv() Config {
	return Config{
		DatabaseURL:       os.Getenv("DATABASE_URL"),
		TemporalAddress:   os.Getenv("TEMPORAL_ADDRESS"),
		TemporalNamespace: envOr("TEMPORAL_NAMESPACE", "default"),
		TaskQueue:         envOr("EXPD_TASK_QUEUE", "expd"),
		// Keys pasted into env files often carry literal "\n".
		ClerkJWTKey:  strings.ReplaceAll(os.Getenv("CLERK_JWT_KEY"), `\n`, "\n"),
		ClerkJWKSURL: os.Getenv("CLERK_JWKS_URL"),
		LogLevel:     envOr("EXPD_LOG_LEVEL", "info"),
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
