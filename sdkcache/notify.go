package sdkcache

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/gorm"

	"github.com/expd/expd/database"
)

// keysChannel is the PostgreSQL NOTIFY channel of key rotations; the
// payload is the org id.
const keysChannel = "expd_keys"

// listenRetry paces reconnection after the listening connection fails.
const listenRetry = time.Second

// NotifyKeysChanged tells every API instance that the org's keys changed.
// On SQLite (one process) it does nothing: the rotating instance forgets
// the keys itself.
func NotifyKeysChanged(ctx context.Context, db *gorm.DB, orgID string) error {
	if !database.IsPostgres(db) {
		return nil
	}
	if err := db.WithContext(ctx).Exec("SELECT pg_notify(?, ?)", keysChannel, orgID).Error; err != nil {
		return fmt.Errorf("notify key change of org %s: %w", orgID, err)
	}
	return nil
}

// Listen applies other instances' key rotations to this cache until ctx
// ends, reconnecting after failures. Every (re)connection forgets all keys,
// since rotations may have been missed while not listening. On SQLite it
// returns at once.
func (c *Cache) Listen(ctx context.Context) {
	if !database.IsPostgres(c.db) {
		return
	}
	for ctx.Err() == nil {
		err := c.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		slog.WarnContext(ctx, "sdkcache: key-rotation listener failed; reconnecting", "error", err, "retry_in", listenRetry)
		select {
		case <-ctx.Done():
		case <-time.After(listenRetry):
		}
	}
}

// Listening is closed once Listen first receives rotations (PostgreSQL
// only): from then on a rotation committed anywhere reaches this cache.
func (c *Cache) Listening() <-chan struct{} { return c.listening }

func (c *Cache) listenOnce(ctx context.Context) error {
	sqlDB, err := c.db.DB()
	if err != nil {
		return fmt.Errorf("database handle: %w", err)
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		return fmt.Errorf("take a connection: %w", err)
	}
	defer conn.Close()
	var listenErr error
	// The connection is dedicated to LISTEN until it fails; ErrBadConn makes
	// database/sql close it instead of handing a listening session to others.
	_ = conn.Raw(func(dc any) error {
		std, ok := dc.(*stdlib.Conn)
		if !ok {
			listenErr = fmt.Errorf("driver connection is %T, not pgx", dc)
			return driver.ErrBadConn
		}
		listenErr = c.receive(ctx, std)
		return driver.ErrBadConn
	})
	return listenErr
}

func (c *Cache) receive(ctx context.Context, std *stdlib.Conn) error {
	pg := std.Conn()
	if _, err := pg.Exec(ctx, "LISTEN "+keysChannel); err != nil {
		return fmt.Errorf("listen %s: %w", keysChannel, err)
	}
	c.Keys.ForgetAll()
	c.listeningOnce.Do(func() { close(c.listening) })
	for {
		n, err := pg.WaitForNotification(ctx)
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return fmt.Errorf("wait for %s: %w", keysChannel, err)
		}
		c.Keys.ForgetOrg(n.Payload)
	}
}
