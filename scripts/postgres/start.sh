#!/usr/bin/env bash
# Starts Debian's PostgreSQL cluster (installed by .ci/run with apt-get) without systemd, and
# gives the tests a role and a database: postgres://notifbridge:notifbridge@127.0.0.1:5432/notifbridge_test.
# Safe to run again: an online cluster, the role and the database are left as they are.
set -euo pipefail

read -r version cluster status < <(pg_lsclusters --no-header | awk 'NR == 1 { print $1, $2, $4 }') || true
if [[ -z ${version:-} ]]; then
    echo "no PostgreSQL cluster: is the postgresql package installed?" >&2
    exit 1
fi
[[ $status == online ]] || pg_ctlcluster "$version" "$cluster" start

as_postgres() { runuser -u postgres -- psql -v ON_ERROR_STOP=1 -qAt "$@"; }
for _ in $(seq 50); do as_postgres -c 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.2; done
[[ $(as_postgres -c "SELECT 1 FROM pg_roles WHERE rolname = 'notifbridge'") == 1 ]] ||
    as_postgres -c "CREATE ROLE notifbridge LOGIN PASSWORD 'notifbridge'"
[[ $(as_postgres -c "SELECT 1 FROM pg_database WHERE datname = 'notifbridge_test'") == 1 ]] ||
    as_postgres -c "CREATE DATABASE notifbridge_test OWNER notifbridge"
echo "PostgreSQL $version/$cluster online; database notifbridge_test for role notifbridge"
