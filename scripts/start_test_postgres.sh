#!/usr/bin/env bash
# Install (Debian packages), start and prepare a local PostgreSQL for the store tests; prints the URL
# to put in TEST_DATABASE_URL. Needs root, as on CI machines. Idempotent.
set -euo pipefail
if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
  apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >&2
fi
version=$(ls /usr/lib/postgresql | sort -n | tail -n 1)
pg_lsclusters -h | grep -q "^$version main" || pg_createcluster "$version" main >&2
pg_ctlcluster "$version" main start >&2 2>/dev/null || pg_ctlcluster "$version" main status >/dev/null
as_postgres() { su postgres -c "$1"; }
for _ in $(seq 30); do as_postgres "pg_isready -q" && break; sleep 1; done
as_postgres "psql -tAc \"SELECT 1 FROM pg_roles WHERE rolname = 'tutorqa'\"" | grep -q 1 ||
  as_postgres "psql -qc \"CREATE ROLE tutorqa LOGIN PASSWORD 'tutorqa'\"" >&2
as_postgres "psql -tAc \"SELECT 1 FROM pg_database WHERE datname = 'tutorqa_test'\"" | grep -q 1 ||
  as_postgres "createdb -O tutorqa tutorqa_test" >&2
port=$(as_postgres "psql -tAc 'SHOW port'")
echo "postgresql://tutorqa:tutorqa@127.0.0.1:${port}/tutorqa_test"
