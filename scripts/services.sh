#!/usr/bin/env bash
# scripts/services.sh — make sure the databases the integration tests use are
# installed, running and provisioned, then print their DSNs.
#
#   eval "$(scripts/services.sh)"
#
# Runs as root on Debian 12. Idempotent: it installs only what is missing,
# starts only what is not answering, and creates only the test objects that do
# not exist yet. Everything it logs goes to stderr; stdout carries exactly three
# lines:
#
#   export MINIMAL_TEST_PG_DSN='…'
#   export MINIMAL_TEST_MA_DSN='…'
#   export MINIMAL_TEST_CH_DSN='…'
#
# A DSN already set in the environment is printed unchanged (the services are
# still ensured).
#
# Also installs Debian's chromium for the web console's browser tests.
#
# Services (all on loopback only):
#   PostgreSQL  127.0.0.1:5432  role minimal/minimal (LOGIN CREATEDB), db minimal_test
#   MariaDB     127.0.0.1:3306  user minimal/minimal, ALL on minimal_test.*
#   ClickHouse  127.0.0.1:9000  user default (no password), db minimal_test
#               (Debian's clickhouse-server 18.16; HTTP on 8123, interserver 9009)
set -euo pipefail

# Keep the real stdout on fd 3 for the export lines; everything else -> stderr.
exec 3>&1 1>&2

readonly TEST_DB=minimal_test
readonly TEST_USER=minimal
readonly TEST_PASS=minimal

readonly DEFAULT_PG_DSN="postgres://${TEST_USER}:${TEST_PASS}@127.0.0.1:5432/${TEST_DB}?sslmode=disable"
readonly DEFAULT_MA_DSN="${TEST_USER}:${TEST_PASS}@tcp(127.0.0.1:3306)/${TEST_DB}?parseTime=true&multiStatements=false"
readonly DEFAULT_CH_DSN="clickhouse://default:@127.0.0.1:9000/${TEST_DB}"

log() { printf '[services] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
have() { command -v "$1" >/dev/null 2>&1; }

# tcp_open HOST PORT: true when something accepts a TCP connection there.
tcp_open() { (exec 9<>"/dev/tcp/$1/$2") 2>/dev/null; }

# wait_for SECONDS DESCRIPTION CMD...: poll CMD once a second until it succeeds.
wait_for() {
	local timeout=$1 what=$2
	shift 2
	local deadline=$((SECONDS + timeout))
	until "$@"; do
		if ((SECONDS >= deadline)); then
			return 1
		fi
		sleep 1
	done
	log "$what is ready"
}

APT_UPDATED=0
apt_install() {
	if ((APT_UPDATED == 0)); then
		log "apt-get update"
		DEBIAN_FRONTEND=noninteractive apt-get update -q
		APT_UPDATED=1
	fi
	log "apt-get install $*"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@"
}

# shell_quote STRING: STRING as a single-quoted shell word.
shell_quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

[[ $(id -u) -eq 0 ]] || die "must run as root (it may install packages and start servers)"

# ---------------------------------------------------------------- PostgreSQL

pg_ready() {
	if have pg_isready; then
		pg_isready -q -h 127.0.0.1 -p 5432
	else
		tcp_open 127.0.0.1 5432
	fi
}

PG_ADMIN=()
pg_pick_admin() {
	# Socket + peer auth as the postgres OS user first, then TCP as postgres.
	if (cd / && runuser -u postgres -- psql -X -q -At -d postgres -c 'SELECT 1') >/dev/null 2>&1; then
		PG_ADMIN=(runuser -u postgres -- psql -X -q -At -v ON_ERROR_STOP=1 -d postgres)
	elif psql -X -q -At -h 127.0.0.1 -p 5432 -U postgres -d postgres -c 'SELECT 1' >/dev/null 2>&1; then
		PG_ADMIN=(psql -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p 5432 -U postgres -d postgres)
	else
		die "PostgreSQL: cannot connect as superuser postgres (neither via socket as OS user postgres nor via 127.0.0.1)"
	fi
}
pg_admin() { (cd / && "${PG_ADMIN[@]}" "$@"); }

pg_user_can_login() {
	PGPASSWORD=$TEST_PASS PGCONNECT_TIMEOUT=5 psql -X -q -At -h 127.0.0.1 -p 5432 \
		-U "$TEST_USER" -d "$TEST_DB" -c 'SELECT 1' >/dev/null 2>&1
}

ensure_postgres() {
	if pg_ready; then
		log "PostgreSQL: already accepting connections on 127.0.0.1:5432"
	else
		if ! compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null; then
			apt_install postgresql
		fi
		local ver
		# shellcheck disable=SC2012 # version directory names are plain
		if [[ -d /etc/postgresql ]] && [[ -n $(ls -A /etc/postgresql) ]]; then
			ver=$(ls /etc/postgresql | head -1)
		else
			ver=$(ls /usr/lib/postgresql | sort -V | tail -1)
		fi
		if [[ ! -f /etc/postgresql/$ver/main/postgresql.conf ]]; then
			log "PostgreSQL: creating cluster $ver/main"
			pg_createcluster "$ver" main
		fi
		# The package's postinst may have started it (where policy-rc.d allows).
		local pg_wait=60
		if ! pg_ready; then
			install -d -o postgres -g postgres -m 2775 /var/run/postgresql
			log "PostgreSQL: starting cluster $ver/main"
			# pg_ctlcluster waits for startup itself; if it failed, don't wait long.
			if ! pg_ctlcluster --skip-systemctl-redirect "$ver" main start; then
				log "PostgreSQL: pg_ctlcluster start failed"
				pg_wait=5
			fi
		fi
		wait_for "$pg_wait" "PostgreSQL" pg_ready ||
			die "PostgreSQL did not accept connections on 127.0.0.1:5432 within ${pg_wait}s (see /var/log/postgresql/)"
	fi

	pg_pick_admin
	local attrs
	attrs=$(pg_admin -c "SELECT rolcanlogin AND rolcreatedb FROM pg_roles WHERE rolname = '$TEST_USER'")
	if [[ -z $attrs ]]; then
		log "PostgreSQL: creating role $TEST_USER"
		pg_admin -c "CREATE ROLE $TEST_USER LOGIN CREATEDB PASSWORD '$TEST_PASS'"
	elif [[ $attrs != t ]]; then
		log "PostgreSQL: granting LOGIN CREATEDB to role $TEST_USER"
		pg_admin -c "ALTER ROLE $TEST_USER LOGIN CREATEDB"
	fi
	local owner
	owner=$(pg_admin -c "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = '$TEST_DB'")
	if [[ -z $owner ]]; then
		log "PostgreSQL: creating database $TEST_DB"
		pg_admin -c "CREATE DATABASE $TEST_DB OWNER $TEST_USER"
	elif [[ $owner != "$TEST_USER" ]]; then
		log "PostgreSQL: database $TEST_DB owned by $owner; giving it to $TEST_USER"
		pg_admin -c "ALTER DATABASE $TEST_DB OWNER TO $TEST_USER"
	fi
	if ! pg_user_can_login; then
		log "PostgreSQL: $TEST_USER cannot log in with its password; resetting it"
		pg_admin -c "ALTER ROLE $TEST_USER PASSWORD '$TEST_PASS'"
		pg_user_can_login || die "PostgreSQL: $TEST_USER still cannot log in to $TEST_DB over 127.0.0.1 (check pg_hba.conf)"
	fi
	log "PostgreSQL: $TEST_USER@127.0.0.1:5432/$TEST_DB OK"
}

# ------------------------------------------------------------------- MariaDB

ma_ready() {
	# `mysqladmin ping` exits 0 whenever the server answers, even with
	# "Access denied" (Debian's root@localhost is unix_socket-only over TCP).
	if have mysqladmin; then
		mysqladmin --no-defaults --protocol=tcp -h127.0.0.1 -P3306 -uroot \
			--connect-timeout=3 ping >/dev/null 2>&1
	else
		tcp_open 127.0.0.1 3306
	fi
}

MA_ADMIN=()
ma_pick_admin() {
	# Socket as OS root (unix_socket auth on a stock Debian), then TCP as root.
	if mysql -uroot -e 'SELECT 1' >/dev/null 2>&1; then
		MA_ADMIN=(mysql -uroot --batch --skip-column-names)
	elif mysql --protocol=tcp -h127.0.0.1 -P3306 -uroot -e 'SELECT 1' >/dev/null 2>&1; then
		MA_ADMIN=(mysql --protocol=tcp -h127.0.0.1 -P3306 -uroot --batch --skip-column-names)
	else
		die "MariaDB: cannot connect as root (neither via socket nor via 127.0.0.1)"
	fi
}
ma_admin() { "${MA_ADMIN[@]}" "$@"; }

ma_user_can_login() {
	mysql --no-defaults --protocol=tcp -h127.0.0.1 -P3306 -u"$TEST_USER" -p"$TEST_PASS" \
		--connect-timeout=5 "$TEST_DB" -e 'CREATE TEMPORARY TABLE services_probe (x INT); SELECT 1' \
		>/dev/null 2>&1
}

ensure_mariadb() {
	if ma_ready; then
		log "MariaDB: already answering on 127.0.0.1:3306"
	else
		if [[ ! -x /usr/sbin/mariadbd ]]; then
			apt_install mariadb-server
		fi
		if ! ma_ready; then
			install -d -o mysql -g mysql -m 0755 /run/mysqld
			if [[ ! -d /var/lib/mysql/mysql ]]; then
				log "MariaDB: initializing /var/lib/mysql"
				mariadb-install-db --user=mysql --datadir=/var/lib/mysql --skip-test-db >/dev/null
			fi
			log "MariaDB: starting mariadbd"
			# --user: Debian's stock config leaves `user = mysql` commented out.
			start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- --user=mysql
		fi
		wait_for 60 "MariaDB" ma_ready ||
			die "MariaDB did not answer on 127.0.0.1:3306 within 60s (its stderr is discarded; run '/usr/sbin/mariadbd --user=mysql' in the foreground to see why)"
	fi

	ma_pick_admin
	local users
	users=$(ma_admin -e "SELECT COUNT(*) FROM mysql.user WHERE User = '$TEST_USER' AND Host IN ('%', 'localhost', '127.0.0.1')")
	local grants_ok=1 h
	for h in % localhost 127.0.0.1; do
		if ! ma_admin -e "SHOW GRANTS FOR '$TEST_USER'@'$h'" 2>/dev/null |
			grep -q "ALL PRIVILEGES ON \`$TEST_DB\`\.\*"; then
			grants_ok=0
		fi
		# Tests that need a database of their own create minimal_<something>.
		if ! ma_admin -e "SHOW GRANTS FOR '$TEST_USER'@'$h'" 2>/dev/null |
			grep -qE 'ALL PRIVILEGES ON `minimal(\\){1,2}_%`'; then
			grants_ok=0
		fi
	done
	if [[ -z $(ma_admin -e "SHOW DATABASES LIKE '$TEST_DB'") ]]; then
		log "MariaDB: creating database $TEST_DB"
		ma_admin -e "CREATE DATABASE \`$TEST_DB\`"
	fi
	if [[ $users != 3 || $grants_ok != 1 ]]; then
		log "MariaDB: creating users $TEST_USER@{%,localhost,127.0.0.1} and granting ALL on $TEST_DB.* and minimal_%.*"
		for h in % localhost 127.0.0.1; do
			ma_admin -e "CREATE USER IF NOT EXISTS '$TEST_USER'@'$h' IDENTIFIED BY '$TEST_PASS';
				GRANT ALL PRIVILEGES ON \`$TEST_DB\`.* TO '$TEST_USER'@'$h';
				GRANT ALL PRIVILEGES ON \`minimal\_%\`.* TO '$TEST_USER'@'$h'"
		done
	fi
	if ! ma_user_can_login; then
		log "MariaDB: $TEST_USER cannot log in with its password; resetting it"
		for h in % localhost 127.0.0.1; do
			ma_admin -e "ALTER USER '$TEST_USER'@'$h' IDENTIFIED BY '$TEST_PASS'"
		done
		ma_user_can_login || die "MariaDB: $TEST_USER still cannot use $TEST_DB over 127.0.0.1"
	fi
	log "MariaDB: $TEST_USER@127.0.0.1:3306/$TEST_DB OK"
}

# ---------------------------------------------------------------- ClickHouse

readonly CH_CONFIG=/etc/clickhouse-server/config.xml
readonly CH_LISTEN_OVERRIDE=/etc/clickhouse-server/config.d/minimal-listen.xml

# Never let the client wait on stdin, and never let it hang the script.
ch_client() { timeout 30 clickhouse-client --host 127.0.0.1 --port 9000 "$@" </dev/null; }

ch_ready() {
	if have clickhouse-client; then
		ch_client --connect_timeout 3 --query 'SELECT 1' >/dev/null 2>&1
	else
		tcp_open 127.0.0.1 9000
	fi
}

# With no <listen_host> at all, ClickHouse binds ::1 and 127.0.0.1 (and
# tolerates a missing ::1). Pin it to 127.0.0.1 unless the admin chose
# something in config.xml or config.d already.
ch_pin_loopback() {
	[[ -e $CH_LISTEN_OVERRIDE ]] && return 0
	local hosts
	hosts=$(cat "$CH_CONFIG" /etc/clickhouse-server/config.d/*.xml 2>/dev/null |
		perl -0777 -pe 's/<!--.*?-->//gs' | grep -o '<listen_host>[^<]*' || true)
	if [[ -n $hosts ]]; then
		log "ClickHouse: listen_host already configured (${hosts//<listen_host>/}); leaving it"
		return 0
	fi
	log "ClickHouse: writing $CH_LISTEN_OVERRIDE (listen on 127.0.0.1 only)"
	install -d -m 0755 /etc/clickhouse-server/config.d
	cat >"$CH_LISTEN_OVERRIDE" <<'XML'
<?xml version="1.0"?>
<!-- Written by scripts/services.sh (Minimal test services): loopback only. -->
<yandex>
    <listen_host>127.0.0.1</listen_host>
</yandex>
XML
}

ensure_clickhouse() {
	local pkgs=()
	have clickhouse-client || pkgs+=(clickhouse-client)
	if ! ch_ready; then
		[[ -x /usr/sbin/clickhouse-server ]] || pkgs+=(clickhouse-server)
	fi
	if ((${#pkgs[@]})); then
		apt_install "${pkgs[@]}"
	fi

	if ch_ready; then
		log "ClickHouse: already answering on 127.0.0.1:9000"
	else
		ch_pin_loopback
		id clickhouse >/dev/null 2>&1 || die "ClickHouse: no 'clickhouse' system user (package install incomplete?)"
		install -d -o clickhouse -g clickhouse /var/lib/clickhouse /var/log/clickhouse-server
		chown -R clickhouse:clickhouse /var/lib/clickhouse /var/log/clickhouse-server
		log "ClickHouse: starting clickhouse-server"
		start-stop-daemon --start --oknodo --background --chuid clickhouse:clickhouse \
			--exec /usr/sbin/clickhouse-server -- --config="$CH_CONFIG"
		wait_for 90 "ClickHouse" ch_ready ||
			die "ClickHouse did not answer on 127.0.0.1:9000 within 90s (see /var/log/clickhouse-server/)"
	fi

	# (18.16 has no SHOW DATABASES LIKE.)
	if [[ $(ch_client --query "SELECT count() FROM system.databases WHERE name = '$TEST_DB'") != 1 ]]; then
		log "ClickHouse: creating database $TEST_DB"
		ch_client --query "CREATE DATABASE IF NOT EXISTS $TEST_DB"
	fi
	[[ $(ch_client --user default --database "$TEST_DB" --query 'SELECT currentDatabase()') == "$TEST_DB" ]] ||
		die "ClickHouse: cannot use database $TEST_DB as user default"
	log "ClickHouse: default@127.0.0.1:9000/$TEST_DB OK"
}

# ------------------------------------------------------------------ Chromium

# The web console's browser tests (cmd/minimal, chromedp) drive Debian's
# headless Chromium; no server to start.
ensure_chromium() {
	if have chromium || have chromium-browser; then
		log "Chromium: $(command -v chromium || command -v chromium-browser) OK"
		return
	fi
	apt_install chromium
	have chromium || die "Chromium: apt-get install chromium did not provide /usr/bin/chromium"
	log "Chromium: installed"
}

# ---------------------------------------------------------------------- main

start=$SECONDS
ensure_postgres
ensure_mariadb
ensure_clickhouse
ensure_chromium
log "all services ready in $((SECONDS - start))s"

printf 'export MINIMAL_TEST_PG_DSN=%s\n' "$(shell_quote "${MINIMAL_TEST_PG_DSN:-$DEFAULT_PG_DSN}")" >&3
printf 'export MINIMAL_TEST_MA_DSN=%s\n' "$(shell_quote "${MINIMAL_TEST_MA_DSN:-$DEFAULT_MA_DSN}")" >&3
printf 'export MINIMAL_TEST_CH_DSN=%s\n' "$(shell_quote "${MINIMAL_TEST_CH_DSN:-$DEFAULT_CH_DSN}")" >&3
