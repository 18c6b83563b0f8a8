//go:build tools

// Package deps pins modules that the packages being written in parallel
// import, so go.sum carries them before the importing code lands.
package deps

import (
	_ "github.com/gin-gonic/gin"
	_ "github.com/golang-jwt/jwt/v5"
	_ "github.com/google/uuid"
	_ "github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/stripe/stripe-go/v76"
	_ "github.com/stripe/stripe-go/v76/checkout/session"
	_ "github.com/stripe/stripe-go/v76/client"
	_ "github.com/stripe/stripe-go/v76/webhook"
	_ "github.com/svix/svix-webhooks/go"
	_ "github.com/temporalio/ui-server/v2/server"
	_ "github.com/temporalio/ui-server/v2/server/config"
	_ "go.temporal.io/sdk/client"
	_ "go.temporal.io/sdk/temporal"
	_ "go.temporal.io/sdk/testsuite"
	_ "go.temporal.io/sdk/worker"
	_ "go.temporal.io/sdk/workflow"
	_ "go.temporal.io/server/temporal"
	_ "go.temporal.io/server/temporaltest"
	_ "gonum.org/v1/gonum/stat"
	_ "gonum.org/v1/gonum/stat/distuv"
	_ "gorm.io/driver/postgres"
	_ "gorm.io/driver/sqlite"
	_ "gorm.io/gorm"
	_ "modernc.org/sqlite"
	_ "github.com/stretchr/testify/require"
)
