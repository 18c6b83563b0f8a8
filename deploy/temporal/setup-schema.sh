#!/bin/sh
# Creates or upgrades Temporal's two PostgreSQL schemas, then exits. Safe to
# re-run: setup-schema -v 0.0 only creates the version table, and
# update-schema applies the versioned steps the database lacks.
set -eu
tool() { temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" --pw "$POSTGRES_PWD" "$@"; }
for db in temporal temporal_visibility; do
  kind=temporal
  [ "$db" = temporal_visibility ] && kind=visibility
  tool --db "$db" create || true # exists already on re-runs (and from deploy/postgres-init.sql)
  tool --db "$db" setup-schema -v 0.0
  tool --db "$db" update-schema -d "/etc/temporal/schema/postgresql/v12/$kind/versioned"
done
echo "Temporal schemas are current"
