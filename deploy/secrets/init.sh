#!/usr/bin/env bash
# Create the secrets deploy/docker-compose.yml reads (compose `secrets:`, mounted under
# /run/secrets/ in the containers). Never overwrites a file that exists: run it again at
# any time; delete a file to have it made anew (see README.md for what that changes).
#
# Usage: deploy/secrets/init.sh [--tenants acme,globex] [DIR]
#   DIR       where to write (default: $NUGGETFLOW_SECRETS_DIR, else this folder);
#             point compose at it with NUGGETFLOW_SECRETS_DIR=DIR
#   --tenants tenants the generated gRPC token may use (default: gnome, the sample corpus)
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TENANTS="gnome"
DIR=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --tenants) TENANTS="${2:?--tenants needs a comma-separated list}"; shift 2 ;;
    --tenants=*) TENANTS="${1#--tenants=}"; shift ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "init.sh: unknown option $1" >&2; exit 2 ;;
    *) DIR="$1"; shift ;;
  esac
done
DIR="${DIR:-${NUGGETFLOW_SECRETS_DIR:-$SCRIPT_DIR}}"
[[ "$TENANTS" =~ ^[A-Za-z0-9._-]+(,[A-Za-z0-9._-]+)*$ ]] || {
  echo "init.sh: --tenants takes names of letters, digits, '.', '_' and '-', comma-separated" >&2
  exit 2
}

# The folder is private to its owner; the files are world-readable because compose bind-
# mounts them with their own permissions and the containers run as other users
# (nuggetflow 10001, opensearch 1000, kafka appuser, grafana 472). Through the 0700
# folder no other user of this host can reach them.
umask 077
mkdir -p "$DIR"
chmod 700 "$DIR"

random() {  # random LENGTH: letters and digits from the kernel's CSPRNG
  local out=""
  while [[ ${#out} -lt $1 ]]; do
    out+="$(head -c 256 /dev/urandom | LC_ALL=C tr -dc 'A-Za-z0-9')"
  done
  printf '%s' "${out:0:$1}"
}

made=()
write() {  # write NAME CONTENT: create DIR/NAME unless it exists
  local path="$DIR/$1"
  if [[ -e "$path" ]]; then
    return 0
  fi
  printf '%s' "$2" >"$path.tmp"
  chmod 644 "$path.tmp"
  mv "$path.tmp" "$path"
  made+=("$1")
}

# gRPC bearer token(s) of the query service: {token: [tenant, ...]}
json_tenants="$(printf '"%s",' ${TENANTS//,/ })"
write nuggetflow_tokens.json "{\"$(random 40)\": [${json_tenants%,}]}
"
# OpenSearch's admin password: the 2.x image wants a strong one (upper, lower, digit,
# special character); the random part is 28 letters and digits.
write opensearch_admin_password "$(random 28)-Aa1"
# Kafka SASL/PLAIN: the client's password, and the broker's JAAS file that accepts it;
# the file also holds the brokers' own user, which brokers and controllers of a cluster
# (deploy/docker-compose.cluster.yml) authenticate to each other with
write kafka_password "$(random 32)"
broker_password="$(random 32)"
write kafka_server_jaas.conf "KafkaServer {
    org.apache.kafka.common.security.plain.PlainLoginModule required
    username=\"broker\"
    password=\"$broker_password\"
    user_broker=\"$broker_password\"
    user_nuggetflow=\"$(cat "$DIR/kafka_password")\";
};
"
write grafana_admin_password "$(random 24)"
# The OpenAI-compatible API key: empty (no key) until you put yours in
write openai_api_key ""

if grep -q "user_nuggetflow=\"$(cat "$DIR/kafka_password")\"" "$DIR/kafka_server_jaas.conf"; then
  :
else
  echo "init.sh: $DIR/kafka_server_jaas.conf does not accept $DIR/kafka_password;" \
       "delete both and run again" >&2
  exit 1
fi

if ! grep -q 'user_broker=' "$DIR/kafka_server_jaas.conf"; then
  echo "init.sh: note: $DIR/kafka_server_jaas.conf (from an earlier init.sh) has no broker" \
       "user, which the cluster variant needs; delete it and run again to add one" >&2
fi

if [[ ${#made[@]} -eq 0 ]]; then
  echo "secrets in $DIR: all present, nothing changed"
else
  echo "secrets in $DIR: created ${made[*]}"
fi
echo "gRPC token (tenants: $(grep -o '\[.*\]' "$DIR/nuggetflow_tokens.json")): the key in $DIR/nuggetflow_tokens.json"
echo "Grafana: user admin, password in $DIR/grafana_admin_password"
[[ -s "$DIR/openai_api_key" ]] || echo "OpenAI key: none (write it to $DIR/openai_api_key and set NUGGETFLOW_LLM=openai)"
