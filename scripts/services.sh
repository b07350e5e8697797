#!/usr/bin/env bash
# Makes sure the services the test suite talks to are up: MariaDB on 127.0.0.1:3306 (root, empty password,
# database `test`) and Redis on 127.0.0.1:6379. Starts them when they are installed but stopped, and installs the
# Debian packages `mariadb-server` / `redis-server` first when they are missing (needs root or sudo).
# Used by `npm test` and by `.ci/run`. SKIP_SERVICES=1 (or CI_SKIP_SERVICES=1) skips it.
set -uo pipefail
if [ "${SKIP_SERVICES:-${CI_SKIP_SERVICES:-0}}" = 1 ]; then exit 0; fi

LOG_DIR=${CI_LOG_DIR:-${TMPDIR:-/tmp}/gateway-services}
mkdir -p "$LOG_DIR"
export DEBIAN_FRONTEND=noninteractive
log() { printf '[services] %s %s\n' "$(date -u +%H:%M:%S)" "$*"; }
warn() { log "WARNING: $*"; }
have() { local p; p=$(command -v "$1" 2>/dev/null) && [ -x "$p" ]; }

SUDO=()
if [ "$(id -u)" != 0 ] && have sudo; then SUDO=(sudo -n); fi

# ---------------------------------------------------------------------------------------------------------------
# helpers

# tcp_open HOST PORT: true when something accepts a TCP connection there (2 s limit).
tcp_open() { timeout 2 bash -c "exec 3<>/dev/tcp/$1/$2" >/dev/null 2>&1; }

# wait_for SECONDS DESCRIPTION COMMAND...: polls COMMAND every second until it succeeds or time runs out.
wait_for() {
  local limit=$1 what=$2; shift 2
  local waited=0
  while [ "$waited" -lt "$limit" ]; do
    if "$@"; then log "$what: ready after ${waited}s"; return 0; fi
    sleep 1; waited=$((waited + 1))
  done
  warn "$what: not ready after ${limit}s"
  return 1
}

APT_UPDATED=0
# apt_install PACKAGE...: apt-get update (once) and install; output goes to a file, its tail is printed.
apt_install() {
  if ! have apt-get; then warn "apt-get not found; cannot install $*"; return 1; fi
  local out="$LOG_DIR/apt.log" rc
  if [ "$APT_UPDATED" = 0 ]; then
    log "apt-get update"
    timeout 600 "${SUDO[@]}" apt-get -o DPkg::Lock::Timeout=120 update </dev/null >>"$out" 2>&1
    rc=$?
    if [ "$rc" != 0 ]; then warn "apt-get update exited $rc (continuing; see $out)"; tail -n 5 "$out" | sed 's/^/[ci]   /'; fi
    APT_UPDATED=1
  fi
  log "apt-get install -y $*"
  timeout 1200 "${SUDO[@]}" apt-get -o DPkg::Lock::Timeout=120 install -y --no-install-recommends "$@" </dev/null >>"$out" 2>&1
  rc=$?
  tail -n 3 "$out" | sed 's/^/[ci]   /'
  if [ "$rc" != 0 ]; then warn "apt-get install $* exited $rc (see $out)"; return 1; fi
  return 0
}

# ---------------------------------------------------------------------------------------------------------------
# MariaDB

mysql_client() {
  if have mariadb; then echo mariadb; elif have mysql; then echo mysql; else return 1; fi
}
mysql_admin() {
  if have mariadb-admin; then echo mariadb-admin; elif have mysqladmin; then echo mysqladmin; else return 1; fi
}
mysql_server_bin() {
  local b
  for b in /usr/sbin/mariadbd /usr/sbin/mysqld "$(command -v mariadbd 2>/dev/null)" "$(command -v mysqld 2>/dev/null)"; do
    if [ -n "$b" ] && [ -x "$b" ]; then echo "$b"; return 0; fi
  done
  return 1
}

# The server is up: it answers a ping (socket or TCP), or at least accepts TCP on 3306.
mysql_alive() {
  local adm
  if adm=$(mysql_admin); then
    "$adm" --connect-timeout=2 ping >/dev/null 2>&1 && return 0
    "$adm" --connect-timeout=2 --protocol=TCP -h 127.0.0.1 -P 3306 -u root ping >/dev/null 2>&1 && return 0
  fi
  tcp_open 127.0.0.1 3306
}
# root can log in over TCP with an empty password.
mysql_root_tcp() {
  local cli
  cli=$(mysql_client) || return 1
  "$cli" --connect-timeout=3 --protocol=TCP -h 127.0.0.1 -P 3306 -u root -e 'SELECT 1' >/dev/null 2>&1
}
# Run SQL as root, over TCP if that works, otherwise over the socket (unix_socket auth as the OS root).
mysql_exec() {
  local cli
  cli=$(mysql_client) || return 1
  if mysql_root_tcp; then
    "$cli" --connect-timeout=3 --protocol=TCP -h 127.0.0.1 -P 3306 -u root -e "$1"
  else
    "${SUDO[@]}" "$cli" --connect-timeout=3 -u root -e "$1"
  fi
}

start_mariadb() {
  local bin
  bin=$(mysql_server_bin) || return 1
  # What the Debian package or its init script would otherwise prepare.
  "${SUDO[@]}" mkdir -p /run/mysqld /var/log/mysql
  if id mysql >/dev/null 2>&1; then "${SUDO[@]}" chown mysql:mysql /run/mysqld /var/log/mysql 2>/dev/null; fi
  if [ ! -d /var/lib/mysql/mysql ]; then
    local inst
    if have mariadb-install-db; then inst=mariadb-install-db; elif have mysql_install_db; then inst=mysql_install_db; fi
    if [ -n "${inst:-}" ]; then
      log "MariaDB: initialising the data directory with $inst"
      timeout 300 "${SUDO[@]}" "$inst" --user=mysql --datadir=/var/lib/mysql </dev/null >>"$LOG_DIR/mariadb-start.log" 2>&1 \
        || warn "MariaDB: $inst failed (see $LOG_DIR/mariadb-start.log)"
    fi
  fi
  if have start-stop-daemon; then
    log "MariaDB: start-stop-daemon --start --oknodo --background --exec $bin"
    "${SUDO[@]}" start-stop-daemon --start --oknodo --background --exec "$bin" -- --user=mysql \
      </dev/null >>"$LOG_DIR/mariadb-start.log" 2>&1 || { warn "MariaDB: start-stop-daemon failed"; return 1; }
  elif have mysqld_safe; then
    log "MariaDB: mysqld_safe in the background"
    # setsid + redirections: the daemon holds none of this script's descriptors.
    "${SUDO[@]}" setsid mysqld_safe --user=mysql </dev/null >>"$LOG_DIR/mariadb-start.log" 2>&1 &
    disown 2>/dev/null || true
  else
    warn "MariaDB: neither start-stop-daemon nor mysqld_safe found"; return 1
  fi
}

ensure_mariadb() {
  log "MariaDB: checking 127.0.0.1:3306"
  if ! mysql_alive; then
    if ! mysql_server_bin >/dev/null; then
      log "MariaDB: server not installed"
      apt_install mariadb-server || true
      # The package's scripts may have started it already.
      if mysql_alive; then log "MariaDB: running after install"; fi
    fi
    if ! mysql_alive; then
      if ! start_mariadb; then
        warn "MariaDB: could not be started"
        return 1
      fi
      wait_for 90 "MariaDB" mysql_alive || {
        warn "MariaDB did not start; last lines of its logs:"
        tail -n 20 "$LOG_DIR/mariadb-start.log" /var/log/mysql/error.log 2>/dev/null | sed 's/^/[ci]   /'
        return 1
      }
    fi
  else
    log "MariaDB: already running"
  fi

  if ! mysql_client >/dev/null; then warn "MariaDB: no mariadb/mysql client; cannot check root or create 'test'"; return 1; fi

  if ! mysql_root_tcp; then
    log "MariaDB: root cannot log in over TCP with an empty password; fixing that over the socket"
    # root@localhost keeps socket login and gains an empty password; 127.0.0.1 and ::1 cover skip-name-resolve.
    mysql_exec "ALTER USER 'root'@'localhost' IDENTIFIED VIA mysql_native_password USING PASSWORD('') OR unix_socket;" 2>>"$LOG_DIR/mariadb-start.log" \
      || mysql_exec "ALTER USER 'root'@'localhost' IDENTIFIED BY '';" 2>>"$LOG_DIR/mariadb-start.log" || true
    local h
    for h in 127.0.0.1 ::1; do
      mysql_exec "CREATE USER IF NOT EXISTS 'root'@'$h' IDENTIFIED BY ''; GRANT ALL PRIVILEGES ON *.* TO 'root'@'$h' WITH GRANT OPTION;" \
        2>>"$LOG_DIR/mariadb-start.log" || true
    done
    mysql_exec "FLUSH PRIVILEGES;" 2>>"$LOG_DIR/mariadb-start.log" || true
    if mysql_root_tcp; then log "MariaDB: root over TCP works now"; else warn "MariaDB: root over TCP still refused"; fi
  fi

  if mysql_exec "CREATE DATABASE IF NOT EXISTS \`test\`;" >/dev/null 2>>"$LOG_DIR/mariadb-start.log"; then
    log "MariaDB: database 'test' present"
  else
    warn "MariaDB: could not create database 'test'"
    return 1
  fi
  log "MariaDB: $(mysql_exec 'SELECT VERSION();' 2>/dev/null | tail -n 1) ready on 127.0.0.1:3306"
}

# ---------------------------------------------------------------------------------------------------------------
# Redis

redis_alive() {
  if have redis-cli; then
    [ "$(timeout 3 redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" = PONG ] && return 0
    return 1
  fi
  # No client: speak RESP over bash's /dev/tcp.
  timeout 3 bash -c 'exec 3<>/dev/tcp/127.0.0.1/6379 && printf "PING\r\n" >&3 && head -c 5 <&3 | grep -q PONG' 2>/dev/null
}

start_redis() {
  local args=(--daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no)
  [ -d /var/lib/redis ] && args+=(--dir /var/lib/redis)
  if [ -d /var/log/redis ] && [ -w /var/log/redis ]; then args+=(--logfile /var/log/redis/ci.log); fi
  log "Redis: redis-server ${args[*]}"
  "${SUDO[@]}" redis-server "${args[@]}" </dev/null >>"$LOG_DIR/redis-start.log" 2>&1 && return 0
  # Older servers do not know the optional-address form `-::1`.
  warn "Redis: start failed; retrying bound to 127.0.0.1 only"
  args=(--daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no)
  "${SUDO[@]}" redis-server "${args[@]}" </dev/null >>"$LOG_DIR/redis-start.log" 2>&1
}

ensure_redis() {
  log "Redis: checking 127.0.0.1:6379"
  if redis_alive; then log "Redis: already running"; return 0; fi
  if ! have redis-server; then
    log "Redis: server not installed"
    apt_install redis-server || true
    if redis_alive; then log "Redis: running after install"; return 0; fi
  fi
  if ! have redis-server; then warn "Redis: redis-server still missing"; return 1; fi
  if ! start_redis; then
    tail -n 20 "$LOG_DIR/redis-start.log" 2>/dev/null | sed 's/^/[ci]   /'
    return 1
  fi
  wait_for 30 "Redis" redis_alive || {
    tail -n 20 "$LOG_DIR/redis-start.log" 2>/dev/null | sed 's/^/[ci]   /'
    return 1
  }
}


# Fast path: both answer already, nothing to do.
if redis_alive 2>/dev/null && mysql_alive 2>/dev/null; then exit 0; fi
rc=0
ensure_mariadb || { warn "MariaDB is not available; tests that need it will fail"; rc=1; }
ensure_redis || { warn "Redis is not available; tests that need it will fail"; rc=1; }
exit $rc
