#!/bin/sh
# Run by the temporal-admin-tools one-shot: makes Temporal's two databases on the compose Postgres
# (the default store and the visibility store) and brings each schema up to the version this
# admin-tools image ships. Safe to run again, and a newer image migrates the schemas in place
# (update-schema applies only the versions a database lacks).
set -eu

: "${POSTGRES_SEEDS:?the Postgres host}"
: "${POSTGRES_USER:?the Postgres user}"
: "${POSTGRES_PWD:?the Postgres password}"
: "${TEMPORAL_DB:?the default store database}"
: "${TEMPORAL_VISIBILITY_DB:?the visibility store database}"
port="${DB_PORT:-5432}"
schemas=/etc/temporal/schema/postgresql/v12

sql_tool() {
  database="$1"
  shift
  temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$port" \
    -u "$POSTGRES_USER" --pw "$POSTGRES_PWD" --db "$database" "$@"
}

# $1: the database, $2: its versioned schema folder under $schemas.
prepare() {
  # Each step is a no-op the second time: create accepts a database that exists, setup-schema
  # keeps a version above 0.0, update-schema starts from the version the database records.
  sql_tool "$1" create
  # Version 0.0 is the bookkeeping tables only; update-schema then applies every version after it.
  sql_tool "$1" setup-schema -v 0.0
  sql_tool "$1" update-schema -d "$schemas/$2/versioned"
  echo "database $1: schema current"
}

prepare "$TEMPORAL_DB" temporal
prepare "$TEMPORAL_VISIBILITY_DB" visibility
